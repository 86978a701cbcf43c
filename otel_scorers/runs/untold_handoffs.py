"""Run building, phase 3 (a run's handoffs): a handoff nothing in the trace records, read from
how a workflow's agents ran.

An agent run directly inside a workflow span (`invoke_workflow`: one invocation of agents
working together) that records no model call and no request of its own, followed there, after
it ended, by the run of another agent that records none either: nothing gives that agent a task
of its own, so it goes on with the conversation the first was given. The OpenAI Agents SDK's
handoff traced by OpenTelemetry's instrumentation without the OpenAI client's: the agents' and
tools' spans only. Agents given tasks of their own (a crew's) record them, in their model calls
or their requests, and stay runs of their own; so does an agent run twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from otel_scorers.conventions.genai import OPERATION, WORKFLOW
from otel_scorers.runs.run_parts import RunParts, agent_name_of, content_of
from otel_scorers.span_record import SpanRecord


def untold_handoff(
    parts: RunParts,
    later: Sequence[RunParts],
    outer: Mapping[int, RunParts | None],
    by_id: Mapping[int, SpanRecord],
) -> tuple[str, int] | None:
    """(agent handed to, when) of the handoff nothing records from the run `parts` to the next
    run beside it in its workflow (among `later`, in start order), if the rule above says so."""
    parent, ended = parts.span.parent_span_id, parts.span.end_ns
    workflow = by_id.get(parent) if parent is not None else None
    if workflow is None or ended is None or workflow.attributes.get(OPERATION) != WORKFLOW or _asks(parts):
        return None
    around = outer.get(parts.span.span_id)
    follower = next(
        (
            run
            for run in later
            if run is not parts
            and run.span.parent_span_id == parent
            and run.span.start_ns >= ended
            and outer.get(run.span.span_id) is around
        ),
        None,
    )
    if follower is None or _asks(follower):
        return None
    agent, target = agent_name_of(parts), agent_name_of(follower)
    if not agent or not target or agent == target:
        return None
    return target, ended


def _asks(parts: RunParts) -> bool:
    """The run records a model call or a request of its own."""
    content = content_of(parts)
    return bool(parts.models or content.input.items or content.input_text)
