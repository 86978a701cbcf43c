"""Agent runs believed by what they record, when nothing under them shows their work.

A kind key naming agent runs and no call is believed when model or tool spans sit under its runs
(`inferred.py`): a key of that name alone may mark anything. A tracer that records an agent's
work as the agent's own (MLflow's autolog of a CrewAI agent: its span holds the task it was given
and its answer, its model calls and tool calls kept only in the conversation of the task around
it) writes no such span; its vocabulary then shows itself in what each run span records: the
request and the answer under the kind key's own prefix (`acme.spanType = AGENT`, beside
`acme.spanInputs` and `acme.spanOutputs`). Only an agent's kind is believed so (`agent`, the first
tier of run kinds): a workflow's or a client call's span records its input and output as well.
An agent span with spans under it that nothing reads is not believed so: its work is there,
unread (a pipeline's component marked as an agent, its steps known only by their names).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from otel_scorers.conventions.inferred_kinds import RUN_KINDS
from otel_scorers.span_record import SpanRecord


def recorded_runs(
    runs: frozenset[str],
    runs_spans: Sequence[SpanRecord],
    spans: Sequence[SpanRecord],
    found: Callable[[frozenset[str], str], str | None],
) -> bool:
    """Whether the runs (`runs` the kind values naming them, `runs_spans` theirs) are an agent's,
    each recording its input and its output under the kind key's prefix (`found`: the key among a
    span's keys holding a part, under that prefix), none with a span of `spans` (those no reader
    gives a role) under it."""
    if not runs & RUN_KINDS[0] or not runs_spans:
        return False
    ids = {span.span_id for span in runs_spans}
    if any(span.parent_span_id in ids for span in spans):
        return False  # spans under it unread: its work is there, not believed without it
    for span in runs_spans:
        keys = frozenset(span.attributes)
        if found(keys, "input") is None or found(keys, "output") is None:
            return False
    return True
