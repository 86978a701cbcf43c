"""Spans whose parent never arrived, put back under the agent run they name.

An instrumentation that opens a span of an agent's invocation and does not end it when the
agent hands the conversation on or a tool raises (LoongSuite's Google ADK plugin) never exports
that span: its children arrive naming a parent the trace does not hold, cut off from the run
they are the work of. Such a span (a model call, a tool call, a run) that names its agent
(`gen_ai.agent.name`) belongs to that agent's invocation: the innermost `invoke_agent` span of
the same agent, in the same trace, open when it started, stands for the parent that never came.
A span naming no agent, or one no invocation of its agent was open around (a parent in another
trace or service), keeps the parent it names.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from otel_scorers.conventions.genai import OPERATION
from otel_scorers.gen_ai_names import GEN_AI_AGENT_NAME
from otel_scorers.runs.ancestry import MAX_DEPTH
from otel_scorers.span_record import SpanRecord

_INVOKE_AGENT = "invoke_agent"


def reattach_unended_parents(by_id: dict[int, SpanRecord], played: Iterable[int]) -> None:
    """Give each span of one trace holding its root (a part of a split trace has spans whose
    parents are in other traces: nothing in it stands for them) that plays a role (`played`: a model call, a tool call, a run)
    whose parent is not in the trace, and that names its agent, the innermost invocation of that
    agent open when it started as its parent (in `by_id`). Only spans that play a role are looked
    at: a span playing none is not work a run could be missing, and most traces' are most spans."""
    orphans: list[SpanRecord] = []
    for span_id in played:
        span = by_id[span_id]
        above = span.parent_span_id
        if above is not None and above not in by_id and type(span.attributes.get(GEN_AI_AGENT_NAME)) is str:
            orphans.append(span)
    if not orphans:
        return
    invocations: dict[str, list[SpanRecord]] = {}
    for span in by_id.values():
        name = span.attributes.get(GEN_AI_AGENT_NAME)
        if isinstance(name, str) and span.attributes.get(OPERATION) == _INVOKE_AGENT:
            invocations.setdefault(name, []).append(span)
    for orphan in orphans:
        open_around = [
            span
            for span in invocations.get(orphan.attributes[GEN_AI_AGENT_NAME], ())
            if span.start_ns <= orphan.start_ns
            and (span.end_ns is None or span.end_ns >= orphan.start_ns)
            and not _below(span, orphan.span_id, by_id)
        ]
        if open_around:
            parent = max(open_around, key=lambda span: span.start_ns)
            by_id[orphan.span_id] = replace(orphan, parent_span_id=parent.span_id)


def _below(span: SpanRecord, ancestor_id: int, by_id: dict[int, SpanRecord]) -> bool:
    """`span` is `ancestor_id` or lies under it (a span may not become its own descendant's child)."""
    current: SpanRecord | None = span
    for _ in range(MAX_DEPTH):
        if current is None:
            return False
        if current.span_id == ancestor_id:
            return True
        current = by_id.get(current.parent_span_id) if current.parent_span_id is not None else None
    return False
