"""Hand-built SpanRecords for the tests: finished spans of one trace, ids and times in order."""

from __future__ import annotations

import itertools
from typing import Any

from otel_scorers.model import AgentRun
from otel_scorers.run_builder import build_runs
from otel_scorers.span_record import SpanEvent, SpanRecord

TRACE = 0x5B8EFFF798038103D269B633813FC60C
_ids = itertools.count(1)
_clock = itertools.count(1_000, 1_000)


def span(
    name: str,
    parent: SpanRecord | None = None,
    *,
    status: str = "unset",
    events: tuple[SpanEvent, ...] = (),
    scope: str = "agent",
    status_message: str | None = None,
    ended: bool = True,
    **attributes: Any,
) -> SpanRecord:
    """A span, finished unless `ended=False`; `a__b` keyword names stand for the attribute `a.b`."""
    start = next(_clock)
    return SpanRecord(
        trace_id=TRACE,
        span_id=next(_ids),
        parent_span_id=parent.span_id if parent else None,
        name=name,
        start_ns=start,
        end_ns=start + 500 if ended else None,
        status=status,  # type: ignore[arg-type]
        status_message=status_message,
        attributes={key.replace("__", "."): value for key, value in attributes.items()},
        events=events,
        scope=scope,
    )


def event(name: str, **attributes: Any) -> SpanEvent:
    return SpanEvent(name, next(_clock), {key.replace("__", "."): value for key, value in attributes.items()})


def only_run(spans: list[SpanRecord]) -> AgentRun:
    (run,) = build_runs(spans)
    return run
