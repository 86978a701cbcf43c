"""The in-process door: the span processor, its trace buffering and its hold mode."""
