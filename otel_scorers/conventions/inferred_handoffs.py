"""The key of an inferred vocabulary's spans that hand the conversation to another agent
(`inferred.py`, `inferred_definitions.py`).

A tracer that says what its spans are in a key of its own may write a handoff as a span of no
kind, carrying a key that names the agent handed to (`to_agent` beside `from_agent`,
`<prefix>handoff.to`): where that key names, on a span of the trace, the agent of one of its runs,
the span is a handoff, read as a described handoff is (the agent handed to goes on in the run).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from otel_scorers.conventions.base import NAME_KEYS
from otel_scorers.span_record import SpanRecord

#: A key naming the agent a span hands the conversation to: `<prefix>handoff.to`, `handoff_to`,
#: `to_agent`.
HANDOFF_TO = re.compile(r"(?i)(?:^|[.:_])(?:handoff[.:_](?:to|target)|to_agent)$")


def handoff_key(spans: Sequence[SpanRecord], runs: Sequence[SpanRecord]) -> str | None:
    """The key naming the agent handed to on a span of `spans` that is no run, where it names
    the agent of one of `runs` (by a name key every reader shares, or the run span's name); None
    when no span carries one."""
    if len(runs) < 2:  # a handoff goes on in another run span
        return None
    agents = {name for span in runs for name in _names(span)}
    run_ids = {span.span_id for span in runs}
    found = {
        key
        for span in spans
        if span.span_id not in run_ids
        for key, value in span.attributes.items()
        if type(value) is str and value in agents and HANDOFF_TO.search(key)
    }
    return min(found) if found else None


def _names(span: SpanRecord) -> list[str]:
    names = [span.name]
    for key in NAME_KEYS:
        value = span.attributes.get(key)
        if isinstance(value, str) and value:
            names.append(value)
    return names
