"""Run building, phase 3 (a run's handoffs): a call of a framework's handoff tool that no reader
took as a handoff (no span of its own says so: the call is only the model's request, or a tool
span its reader reads as any other) hands the conversation on inside the run.

LlamaIndex's `AgentWorkflow` gives each agent a `handoff` tool whose `to_agent` names the next
agent (`formats/llamaindex.handoff_target`); its agents take turns in the one run, so each call
is a handoff from the agent at work then (the run's, first) to that agent, who answers last.
"""

from __future__ import annotations

from collections.abc import Sequence

from otel_scorers.conventions.formats import llamaindex
from otel_scorers.model import Handoff, ToolCall


def called_handoffs(calls: Sequence[ToolCall], agent: str | None) -> tuple[list[ToolCall], list[Handoff]]:
    """The run's calls less its handoff tool's, and the handoffs those made, in call order, the
    first from `agent` (the run's, None when the trace does not name it). A handoff that failed
    handed nothing on: it stays a call."""
    kept: list[ToolCall] = []
    found: list[Handoff] = []
    for call in calls:
        target = llamaindex.handoff_target(call.name, call.arguments) if call.state == "ok" else None
        if target is None:
            kept.append(call)
            continue
        found.append(Handoff(agent, target, call.start_ns or 0))
        agent = target
    return kept, found
