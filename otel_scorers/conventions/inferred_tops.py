"""When a kind key naming calls of one kind is read, and the unit of work a vocabulary leaves
untyped at the top of a trace.

A key naming calls of one kind only (tools, or model calls) says too little by itself
(`inferred._kind_key`): it is read where a framework's metadata marks an agent's graph among the
spans, or where the trace's root span, no reader's, records what it was given under that key's
own prefix (`lmnr.span.input`) and carries no kind. A tracer may write its default kind as no key
at all (Laminar's TypeScript SDK: an `observe()` span of kind `DEFAULT` has no `lmnr.span.type`),
typing only the calls it traces (`TOOL`): such a root is the application's function around the
calls, traced by the same tracer, and the run, by the rule that reads the root span of a
vocabulary that marks no run (`runs/top_runs.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from otel_scorers.conventions.formats import langchain
from otel_scorers.span_record import SpanRecord


class OneKindKeys:
    """Decides, for one trace's spans without a role, whether a key naming calls of one kind is
    read (`read`), and keeps, for each key read for its untyped root, the key under its prefix
    that root's input is under (`top_inputs`): what makes the root the vocabulary's."""

    def __init__(
        self, spans: Sequence[SpanRecord], input_under: Callable[[str, frozenset[str]], str | None]
    ) -> None:
        self._spans = spans
        #: The key under a kind key's prefix holding an input, among a span's keys (`inferred_description.source_key`).
        self._input_under = input_under
        self._graph: bool | None = None
        self.top_inputs: dict[str, str] = {}

    def graph_marked(self) -> bool:
        """Whether a framework's metadata marks one of the spans as an agent's graph."""
        if self._graph is None:
            self._graph = any(langchain.marks_agent_graph(span) for span in self._spans)
        return self._graph

    def read(self, key: str) -> bool:
        if self.graph_marked():
            return True
        found = self._untyped_top_input(key)
        if found is not None:
            self.top_inputs[key] = found
        return found is not None

    def _untyped_top_input(self, key: str) -> str | None:
        """The key under `key`'s prefix holding what the trace's root span was given, when that
        root carries no `key` and some other span does; None otherwise."""
        root = next((span for span in self._spans if span.parent_span_id is None), None)
        if root is None or key in root.attributes:
            return None
        if not any(key in span.attributes for span in self._spans):
            return None
        return self._input_under(key, frozenset(root.attributes))
