"""Run building, phase 2: the run of an agent a tool prompts, when no span marks it.

A tool may run an agent of its own (an agent used as a tool). An instrumentation that writes the
agent's run span only for the agent the application called (rig's `invoke_agent`, written by the
code around the top-level prompt) leaves that agent's model calls and tool calls directly under
the tool span, each naming the agent (`gen_ai.agent.name`). Model calls directly under a tool
span that name an agent other than the run the tool belongs to are that agent's run: its span is
its first call's (as a run joined from model calls is, `call_chains`), its calls those model
calls, its tool calls the tool spans directly under the same tool span. The tool's own call
stays the outer run's, its result what the tool returned.
"""

from __future__ import annotations

from collections.abc import Mapping

from otel_scorers.conventions import Convention
from otel_scorers.runs.agent_names import named_by_keys
from otel_scorers.runs.ancestry import nearest_marked
from otel_scorers.runs.run_parts import RunParts, agent_name_of
from otel_scorers.span_record import SpanRecord


def tool_prompted_runs(
    runs: dict[int, RunParts],
    tools_asking: list[tuple[Convention, SpanRecord]],
    parents: Mapping[int, int | None],
    owners: dict[int, RunParts | None],
) -> bool:
    """Add to `runs` the run of each agent a tool prompts that no span marks (see the module's
    docstring), from the model spans directly in a tool span (`tools_asking`), taking its tool
    calls from the run the tool belongs to. True when one was added."""
    prompted: dict[int, tuple[str, list[tuple[Convention, SpanRecord]]]] = {}
    for convention, span in tools_asking:
        agent = named_by_keys(span)
        tool_id = span.parent_span_id
        if agent is None or tool_id is None:
            continue
        found = prompted.setdefault(tool_id, (agent, []))
        if found[0] == agent:
            found[1].append((convention, span))
    added = False
    for tool_id, (agent, models) in prompted.items():
        outer = nearest_marked(parents.get(tool_id), parents, runs, owners)
        if outer is None or agent_name_of(outer) == agent:
            continue
        models.sort(key=lambda pair: pair[1].start_ns)
        convention, first = models[0]
        parts = RunParts(first, convention, given_name=agent)
        parts.models = models
        executions = outer.executions.get(tool_id, [])
        parts.tools = [(kind, span) for kind, span in executions if span.parent_span_id == tool_id]
        outer.executions[tool_id] = [pair for pair in executions if pair[1].parent_span_id != tool_id]
        for _, span in parts.tools:
            inner = outer.executions.pop(span.span_id, None)
            if inner is not None:
                parts.executions[span.span_id] = inner
        runs[first.span_id] = parts
        added = True
    return added
