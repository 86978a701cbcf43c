"""The key of an inferred vocabulary's spans that hand the conversation to another agent
(`inferred.py`, `inferred_definitions.py`).

A tracer that says what its spans are in a key of its own may write a handoff as a span of no
kind, carrying a key that names the agent handed to (`to_agent` beside `from_agent`,
`<prefix>handoff.to`): where that key names, on a span of the trace, the agent of one of its runs,
the span is a handoff, read as a described handoff is (the agent handed to goes on in the run).
So is a span, of any kind but a run's, whose name says it hands off to the agent of one of the
trace's runs (`handoff to {agent}`, `transfer_to_{agent}`): a tracer that reads a handoff as
a tool call of the framework's names it so, and records nothing else of it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from otel_scorers.conventions.base import NAME_KEYS
from otel_scorers.span_record import SpanRecord

#: A key naming the agent a span hands the conversation to: `<prefix>handoff.to`, `handoff_to`,
#: `to_agent`.
HANDOFF_TO = re.compile(r"(?i)(?:^|[.:_])(?:handoff[.:_](?:to|target)|to_agent)$")


#: The start of a span's name that says it hands off to the agent named after it: `handoff to `,
#: `transfer_to_`, `hand_off: `.
HANDOFF_NAME = re.compile(r"(?i)^(?:hand_?off|transfer)(?:[ _]to)?[ _:]+")


def handoff_reading(spans: Sequence[SpanRecord], runs: Sequence[SpanRecord]) -> dict[str, Any] | None:
    """The description's `handoff` of the spans handing the conversation to the agent of one of
    `runs`: by a key naming that agent (`handoff_key`), else by a name saying so (`HANDOFF_NAME`);
    None when no span is one."""
    key = handoff_key(spans, runs)
    if key is not None:
        return {"when": {"attributes": {key: "*"}}, "target": key}
    if len(runs) < 2:
        return None
    agents = {name for span in runs for name in _names(span)}
    run_ids = {span.span_id for span in runs}
    found = {
        span.name[: start.end()]
        for span in spans
        if span.span_id not in run_ids
        and (start := HANDOFF_NAME.match(span.name)) is not None
        and span.name[start.end() :] in agents
    }
    if not found:
        return None
    prefix = min(found)
    return {"when": {"name_prefix": prefix}, "target": {"span": "name", "strip_prefix": prefix}}


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
