"""How spans become agent runs: building runs from a trace's spans, the context that grounded an answer, files of traces read as runs."""
