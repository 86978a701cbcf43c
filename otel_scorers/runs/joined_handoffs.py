"""Runs joined by handoffs: a run whose agent hands the conversation to another agent goes on in
that agent's run (`join_handoffs`), and handoffs inside one run span are the run's own.

The handoff a run made is found, first, by its tool spans (`Convention.handoff_target`), then
by what its last model call asked for (`transfer_to_{agent}`), by its last tool call naming an
agent, by the conversation the next agent was sent (`handed_conversations`), and last by a run
of another agent starting beside it (`untold_handoffs`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from otel_scorers.conventions import Convention
from otel_scorers.conventions.base import UNNAMED_AGENT
from otel_scorers.conventions.formats import llamaindex
from otel_scorers.conventions.formats.messages import handoff_agent, handoff_tool_name, tool_call_parts
from otel_scorers.model import Handoff
from otel_scorers.runs.ancestry import MAX_DEPTH
from otel_scorers.runs.generic_io import tool_call_io
from otel_scorers.runs.handed_conversations import conversation_handoff
from otel_scorers.runs.run_parts import RunParts, agent_name_of
from otel_scorers.runs.span_roles import SpanRoles
from otel_scorers.runs.untold_handoffs import untold_handoff
from otel_scorers.span_record import SpanRecord


def join_handoffs(
    ordered: list[RunParts], outer: Mapping[int, RunParts | None], found: SpanRoles
) -> list[RunParts]:
    """A run whose agent hands the conversation to another agent goes on in that agent's run
    (the next run of that agent beside it, in the same outer run, or inside the handing run's
    own spans, under no tool span: Google ADK 1.x runs the next agent inside the model call that
    asked for the transfer): as the user sees it they are one run, that starts with the first
    agent and ends with the last one's answer. The later runs' spans join the first; they are not
    runs of their own."""
    if len(ordered) == 1:
        # A trace's only run (most traces'): no later run to hand to, so a handoff its tool spans
        # record is to an agent that takes its turn inside the run span.
        if _last_handoff(ordered[0]) is not None:
            _handoffs_within(ordered[0])
        return ordered
    by_id = found.by_id
    joined: set[int] = set()
    for index, head in enumerate(ordered):
        if head.span.span_id in joined:
            continue
        current = head
        # Handoffs that no tool span records are found by the runs that follow: the last run
        # (most traces' only one) has none to look for.
        last = index + 1 == len(ordered)
        while (
            handoff := _last_handoff(current)
            or (None if last else _requested_handoff(current, ordered[index + 1 :], outer))
            or (None if last else _named_handoff(current, head, ordered[index + 1 :], outer))
            or (None if last else conversation_handoff(current, ordered[index + 1 :], outer))
            or (None if last else untold_handoff(current, ordered[index + 1 :], outer, by_id))
        ) is not None:
            target, start_ns = handoff
            follower = _follower(ordered[index + 1 :], current, target, start_ns, joined, outer, found)
            if follower is None:
                if current is head:
                    _handoffs_within(head)
                break
            joined.add(follower.span.span_id)
            _absorb(head, current, follower, target, start_ns, outer)
            current = follower
    return [parts for parts in ordered if parts.span.span_id not in joined]


def _follower(
    later: list[RunParts],
    current: RunParts,
    target: str,
    start_ns: int,
    joined: set[int],
    outer: Mapping[int, RunParts | None],
    found: SpanRoles,
) -> RunParts | None:
    """The run that takes over from `current`'s handoff to `target` at `start_ns`."""
    return next(
        (
            parts
            for parts in later
            if parts.span.span_id not in joined
            and parts is not current
            # Inside the same outer run (none, for top-level runs): siblings, or turns the
            # framework delivers through message spans of their own (AutoGen's runtime); or
            # inside the one handing over, under no tool span of it.
            and (
                outer.get(parts.span.span_id) is outer.get(current.span.span_id)
                or _handed_within(parts, current, outer, found)
            )
            and parts.span.start_ns >= start_ns
            and (target == UNNAMED_AGENT or agent_name_of(parts) == target)
        ),
        None,
    )


def _absorb(
    head: RunParts,
    current: RunParts,
    follower: RunParts,
    target: str,
    start_ns: int,
    outer: Mapping[int, RunParts | None],
) -> None:
    """`follower`'s spans join `head`'s run, handed over from `current`."""
    if outer.get(follower.span.span_id) is current:
        head.handed_within.append(follower.span.start_ns)
    target = target or agent_name_of(follower) or UNNAMED_AGENT
    head.handoffs.append(Handoff(agent_name_of(current), target, start_ns))
    head.take_work(follower)
    head.sub_runs.extend(follower.sub_runs)
    head.final = follower


def _handed_within(
    parts: RunParts, current: RunParts, outer: Mapping[int, RunParts | None], found: SpanRoles
) -> bool:
    """`parts` runs inside the spans of the run `current`, under no tool span of it (an agent a
    tool runs is the tool's work, not a handoff)."""
    if outer.get(parts.span.span_id) is not current:
        return False
    span_id = parts.span.parent_span_id
    for _ in range(MAX_DEPTH):
        if span_id is None or span_id == current.span.span_id:
            return True
        if found.roles.get(span_id, (None, None))[1] == "tool":
            return False
        span = found.by_id.get(span_id)
        span_id = span.parent_span_id if span is not None else None
    return False


def _handoffs_within(parts: RunParts) -> None:
    """Handoffs to agents that have no run of their own: the agents take turns inside the one
    run span (LlamaIndex's `AgentWorkflow`). Each hands on from the agent handed to before, the
    first from the run's agent (a conversation's: its first turn's)."""
    agent = agent_name_of(parts) or parts.first_turn_agent
    found = []
    for convention, span in parts.tools:
        target = convention.handoff_target(span)
        if target:  # an unnamed agent has no turn inside the run span to hand to
            found.append((span.start_ns, target))
    for start_ns, target in sorted(found):
        parts.handoffs.append(Handoff(agent, target, start_ns))
        agent = target
    if found:
        parts.final_name = agent


def _last_handoff(parts: RunParts) -> tuple[str, int] | None:
    """(agent handed to, when) of the run's last handoff tool span, if it has one."""
    found: tuple[str, int] | None = None
    for convention, span in parts.tools:
        target = convention.handoff_target(span)
        if target is not None and (found is None or span.start_ns >= found[1]):
            found = (target, span.start_ns)
    return found


def _requested_handoff(
    parts: RunParts, later: Sequence[RunParts], outer: Mapping[int, RunParts | None]
) -> tuple[str, int] | None:
    """(agent handed to, when) of a handoff no tool span records: the run's last model call asked
    for the tool its framework names after the agent (`transfer_to_{agent}`), and a run of that
    agent starts later beside it (which of them follows it, `_join_handoffs` decides)."""
    last = _last_call_beside(parts.models, parts, later, outer)
    if last is None:
        return None
    (convention, span), later = last
    asked = {part.get("name") for part in tool_call_parts(convention.model_call(span).output.items)}
    asked.discard(None)
    if not asked:
        return None
    for follower in later:
        name = agent_name_of(follower)
        if name and handoff_tool_name(name) in asked:
            return name, span.start_ns
    return None


def _named_handoff(
    parts: RunParts, head: RunParts, later: Sequence[RunParts], outer: Mapping[int, RunParts | None]
) -> tuple[str, int] | None:
    """(agent handed to, when) of a handoff its reader does not know: the run's last tool call
    names an agent in its `agent_name` argument (Strands' `handoff_to_agent`, ADK's
    `transfer_to_agent`) or is a LlamaIndex `AgentWorkflow`'s `handoff` naming it `to_agent`,
    whoever wrote the span, and a run of that agent starts after it beside the run. The call is
    machinery (`RunParts.handoff_tools` of the run it joins)."""
    last = _last_call_beside(parts.tools, parts, later, outer)
    if last is None:
        return None
    (convention, span), beside = last
    call = tool_call_io(convention.tool_call(span), span)
    target = handoff_agent(call.arguments) or llamaindex.handoff_target(call.name, call.arguments)
    if target is None or not any(
        run.span.start_ns >= span.start_ns and agent_name_of(run) == target for run in beside
    ):
        return None
    head.handoff_tools.add(span.span_id)
    return target, span.start_ns


def _last_call_beside(
    calls: Sequence[tuple[Convention, SpanRecord]],
    parts: RunParts,
    later: Sequence[RunParts],
    outer: Mapping[int, RunParts | None],
) -> tuple[tuple[Convention, SpanRecord], list[RunParts]] | None:
    """The last of the run's `calls` to start, with the `later` runs beside the run (inside the
    same run, or at the top as it is), or None when it has no call or nothing runs beside it."""
    if not calls:
        return None
    around = outer.get(parts.span.span_id)
    beside = [run for run in later if run is not parts and outer.get(run.span.span_id) is around]
    if not beside:
        return None
    return max(calls, key=lambda pair: pair[1].start_ns), beside
