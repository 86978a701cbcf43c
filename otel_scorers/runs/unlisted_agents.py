"""Run building, phase 1: agents named by an operation no convention lists.

A span naming an agent (`gen_ai.agent.name`) by a GenAI operation no convention lists (OpenLIT's
Pydantic AI `execute_task {agent}`) is that agent's run when it holds spans of its own and no
span of the same agent is around it (`span_roles` gathers the candidates as it reads each span).
"""

from __future__ import annotations

from collections.abc import Mapping

from otel_scorers.conventions import Convention, SpanRole
from otel_scorers.conventions.genai import OPERATION_ROLES, WORKFLOW
from otel_scorers.gen_ai_names import GEN_AI_AGENT_NAME
from otel_scorers.runs.ancestry import MAX_DEPTH
from otel_scorers.span_record import SpanRecord

#: Operations that name an agent without invoking it: creating one is not running it.
_NOT_INVOKING = frozenset({"create_agent", WORKFLOW})


def unlisted_agent_operation(operation: object, span: SpanRecord) -> bool:
    """A GenAI operation no convention lists, on a span that names an agent."""
    return (
        isinstance(operation, str)
        and operation not in OPERATION_ROLES
        and operation not in _NOT_INVOKING
        and isinstance(span.attributes.get(GEN_AI_AGENT_NAME), str)
    )


def unlisted_agent_operations(
    unlisted: list[int],
    by_id: Mapping[int, SpanRecord],
    roles: dict[int, tuple[Convention, SpanRole]],
    unroled: dict[int, Convention],
) -> None:
    """A span naming an agent by an operation no convention lists (OpenLIT's Pydantic AI
    `execute_task {agent}`) is that agent's run when it holds spans of its own and no span of
    the same agent is around it: the spans inside naming the same agent (its graph, each model
    request) are its steps, one naming another agent is that agent's own run (an agent it
    delegated to). Without spans of its own it did nothing to read; holding only agents' runs
    (LoongSuite's `enter` span of a CrewAI crew, named `crew`, around its tasks' `invoke_agent`
    spans), it is what a workflow holding them is, the agents' work, not a run of its own."""
    holding = {
        span.parent_span_id
        for span_id, span in by_id.items()
        if span.parent_span_id is not None and (span_id not in roles or roles[span_id][1] != "run")
    }
    for span_id in unlisted:
        span = by_id[span_id]
        if span_id in holding and not _inside_agent(span, by_id):
            roles[span_id] = (unroled.pop(span_id), "run")


def _inside_agent(span: SpanRecord, by_id: Mapping[int, SpanRecord]) -> bool:
    """A span above `span` names the same agent."""
    name = span.attributes.get(GEN_AI_AGENT_NAME)
    current = span.parent_span_id
    for _ in range(MAX_DEPTH):
        parent = by_id.get(current) if current is not None else None
        if parent is None:
            return False
        if parent.attributes.get(GEN_AI_AGENT_NAME) == name:
            return True
        current = parent.parent_span_id
    return False
