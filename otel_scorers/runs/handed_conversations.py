"""Run building, phase 3 (a run's handoffs): a handoff read from the conversation the next agent
was sent.

When neither a tool span nor the handing run's model calls record the handoff (an
instrumentation that keeps no answer of a model call that asked for tools), the run of the agent
handed to still shows it: its first model call is sent the conversation so far, whose last
request for tools is the handoff tool its framework names after that agent
(`transfer_to_{agent}`). That run, beside the handing one and starting after it ended, goes on
with the conversation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from otel_scorers.conventions.formats.messages import handoff_tool_name
from otel_scorers.runs.run_parts import RunParts, agent_name_of


def conversation_handoff(
    parts: RunParts, later: Sequence[RunParts], outer: Mapping[int, RunParts | None]
) -> tuple[str, int] | None:
    """(agent handed to, when) of the handoff from the run `parts` that the conversation a later
    run beside it was first sent ends with (the rule above); None when none does."""
    ended = parts.span.end_ns
    if ended is None:
        return None
    around = outer.get(parts.span.span_id)
    for follower in later:
        # The cheap tests first: the runs' names and the follower's conversation are read last.
        if (
            follower.span.start_ns < ended
            or not follower.models
            or follower is parts
            or outer.get(follower.span.span_id) is not around
        ):
            continue
        target = agent_name_of(follower)
        if not target or target == agent_name_of(parts):
            continue
        if _last_request(follower) == handoff_tool_name(target):
            return target, follower.span.start_ns
    return None


def _last_request(parts: RunParts) -> str | None:
    """The tool the last request for tools in the conversation the run's first model call was
    sent asked for (the last, when it asked for several); None when it holds none."""
    convention, span = min(parts.models, key=lambda pair: pair[1].start_ns)
    for message in reversed(convention.model_call(span).input.items):
        calls = [part for part in message.get("parts", ()) if part.get("type") == "tool_call"]
        if calls:
            name = calls[-1].get("name")
            return name if isinstance(name, str) else None
    return None
