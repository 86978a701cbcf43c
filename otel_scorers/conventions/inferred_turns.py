"""Spans of a run kind taking turns: a conversation between agents, not their runs (`inferred.py`)."""

from __future__ import annotations

from collections.abc import Sequence

from otel_scorers.span_record import SpanRecord


def turns_of_a_conversation(runs: Sequence[SpanRecord]) -> bool:
    """Spans of a run kind side by side that an agent's name comes back to after another's
    (A, B, A): the turns of a conversation between agents, not invocations; which of them is
    the run the trace does not say, so none is read."""
    siblings: dict[int | None, list[SpanRecord]] = {}
    for span in runs:
        siblings.setdefault(span.parent_span_id, []).append(span)
    for group in siblings.values():
        if len(group) < 3:
            continue
        seen: set[str] = set()
        last = None
        for span in sorted(group, key=lambda span: span.start_ns):
            if span.name != last:
                if span.name in seen:
                    return True
                seen.add(span.name)
                last = span.name
    return False
