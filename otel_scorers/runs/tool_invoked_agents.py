"""An agent a tool invoked, in a trace of a described tracer over a framework its description was
not written from (`unrun_descriptions`).

The agent a tool's call ran is found by its place under the tool span (`Convention.run_under_tool`),
whatever its reader's run clauses say. When those are the only runs a trace holds, the agent whose
model called the tool was not found: its run clauses found nothing, as in a trace with no run at
all, and the trace is read the same way, by the vocabulary it shows. In that reading a run with no
span under it, directly under a tool span whose other spans hold model or tool calls, is no run:
the call of the invoked agent recorded beside the loop the agent ran, under the same tool call.

Whatever the reader, an agent a tool invoked may carry nothing that marks it a run: a span
without a role directly under a tool span is one when its reader says so there
(`unroled_under_tools`), or when it holds a loop of its own (`runs_under_tools`).
"""

from __future__ import annotations

from collections.abc import Mapping

from otel_scorers.conventions import Convention, SpanRole
from otel_scorers.runs.ancestry import MAX_DEPTH
from otel_scorers.span_record import SpanRecord


def only_tool_invoked_runs(
    by_id: Mapping[int, SpanRecord], roles: Mapping[int, tuple[Convention, SpanRole]]
) -> bool:
    """Each run of the trace, if any, is directly under a tool span: no run called the tool."""
    for span_id, (_, role) in roles.items():
        if role != "run":
            continue
        parent = by_id[span_id].parent_span_id
        if parent is None or roles.get(parent, (None, None))[1] != "tool":
            return False
    return True


def idle_invoked_runs(
    by_id: Mapping[int, SpanRecord],
    roles: Mapping[int, tuple[Convention, SpanRole]],
    given: Mapping[int, SpanRole | None],
) -> list[int]:
    """The spans `given` (an inferred reading's roles, over `roles`) reads as runs that hold no span,
    directly under a tool span that holds model or tool calls beside them (module doc)."""
    runs = [span_id for span_id, role in given.items() if role == "run"]
    if not runs:
        return []
    parents = {span.parent_span_id for span in by_id.values()}
    leaves = [span_id for span_id in runs if span_id not in parents]
    idle = []
    for span_id in leaves:
        parent = by_id[span_id].parent_span_id
        if parent is None:
            continue
        role = given[parent] if parent in given else roles.get(parent, (None, None))[1]
        if role == "tool" and _holds_calls(parent, by_id, given):
            idle.append(span_id)
    return idle


def _holds_calls(span_id: int, by_id: Mapping[int, SpanRecord], given: Mapping[int, SpanRole | None]) -> bool:
    """A model or tool call of `given` is under the span."""
    for call_id, role in given.items():
        if role not in ("model", "tool"):
            continue
        current = by_id[call_id].parent_span_id
        for _ in range(MAX_DEPTH):
            if current is None:
                break
            if current == span_id:
                return True
            parent = by_id.get(current)
            current = parent.parent_span_id if parent is not None else None
    return False


def unroled_under_tools(
    by_id: dict[int, SpanRecord],
    roles: dict[int, tuple[Convention, SpanRole]],
    unroled: dict[int, Convention],
) -> dict[int, Convention]:
    """An agent graph invoked from a tool may carry nothing that marks it a run: its place does.
    Spans directly under a tool span that their convention says are runs there become runs; the
    other unroled ones there are returned, for `runs_under_tools` to look at."""
    under_tool: dict[int, Convention] = {}
    # The tool spans first (a run made below is no tool span): most traces' spans are under none.
    tools = {span_id for span_id, (_, role) in roles.items() if role == "tool"}
    if not tools:
        return under_tool
    for span_id, span in by_id.items():
        if span.parent_span_id not in tools or span_id in roles:
            continue
        convention = unroled.get(span_id)
        if convention is None:
            continue
        if convention.run_under_tool(span):
            roles[span_id] = (convention, "run")
            del unroled[span_id]
        else:
            under_tool[span_id] = convention
    return under_tool


def runs_under_tools(
    under_tool: Mapping[int, Convention],
    by_id: Mapping[int, SpanRecord],
    roles: dict[int, tuple[Convention, SpanRole]],
    unroled: dict[int, Convention],
) -> None:
    """A span without a role directly under a tool span, above the model and tool calls of a
    loop of its own (no run or tool span between; a tool call may sit in a model call's span, a
    step of the loop: Mastra's), is the agent the tool invoked, whatever marks it carries: a graph
    that its instrumentation marks as an agent only at the top (Langfuse's)."""
    above: dict[SpanRole, set[int]] = {"model": set(), "tool": set()}
    for span_id, (_, role) in list(roles.items()):
        if role not in above:
            continue
        current = by_id[span_id].parent_span_id
        for _ in range(MAX_DEPTH):
            if current is None or current not in by_id:
                break
            if current in roles and (role != "tool" or roles[current][1] != "model"):
                break  # a tool called inside a model call's span (a step of the loop) is the loop's
            if current in under_tool:
                above[role].add(current)
                break
            current = by_id[current].parent_span_id
    # A loop: model calls and tool calls of its own (a tool that only asks a model, a query
    # engine, is not an agent).
    for span_id in above["model"] & above["tool"]:
        roles[span_id] = (under_tool[span_id], "run")
        unroled.pop(span_id, None)
