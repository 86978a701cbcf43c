"""How spans become agent runs: building runs from a trace's spans, the conversation each belongs to, the context that grounded an answer, files of traces read as runs."""
