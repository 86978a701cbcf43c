"""Run building, phase 2: each span of a trace given to the run it belongs to.

Each tool and model span belongs to its nearest run ancestor, so a sub-agent is its own run and
the outer run sees only the tool call that started it. A run whose agent hands the conversation
on goes on in the next agent's run, which joins it (`joined_handoffs`); runs nested in a
conversation that absorbs its turns are turns of it. When the run span names no agent or holds
no request or answer, the spans inside it that play no role may (`Convention.step_content`):
the first one's agent and request, the last one's answer.
"""

from __future__ import annotations

from collections.abc import Mapping

from otel_scorers.conventions import Convention, SpanRole
from otel_scorers.conventions.frameworks import framework_marking
from otel_scorers.runs.ancestry import MAX_DEPTH, child_counts, nearest_marked
from otel_scorers.runs.displaced_layers import give_displaced_layers
from otel_scorers.runs.invocations import one_run_per_invocation
from otel_scorers.runs.joined_handoffs import join_handoffs
from otel_scorers.runs.run_parts import RunParts
from otel_scorers.runs.span_roles import SpanRoles
from otel_scorers.runs.tool_prompted_runs import tool_prompted_runs
from otel_scorers.span_record import SpanRecord


def assemble_runs(found: SpanRoles) -> list[RunParts]:
    """The trace's runs, each with the spans that belong to it, in start order."""
    by_id, roles = found.by_id, found.roles
    runs: dict[int, RunParts] = {
        span_id: RunParts(by_id[span_id], convention)
        for span_id, (convention, role) in roles.items()
        if role == "run"
    }
    if not runs:
        return []
    parents = _ParentIds(by_id)
    _absorb_turns(runs, roles, parents)
    _name_within_parents(runs, by_id)
    # Each span's nearest run, shared by every walk up the tree below.
    owners: dict[int, RunParts | None] = {}
    tools_asking: list[tuple[Convention, SpanRecord]] = []  # model calls directly in a tool span
    unheld: list[tuple[Convention, SpanRecord]] = []  # model calls no run holds
    _give_roled_spans(runs, roles, by_id, parents, owners, tools_asking, unheld)
    give_displaced_layers(runs.values(), unheld)
    if tools_asking and tool_prompted_runs(runs, tools_asking, parents(), owners):
        owners = {}  # more runs: walked anew
    unroled = found.unroled
    if unroled:  # steps, and spans around a run, are spans without a role
        _give_steps(runs, unroled, by_id, parents(), owners)
    if len(runs) > 1 and one_run_per_invocation(runs, roles, by_id, parents()):
        owners = {}  # fewer runs: walked anew
    if unroled:
        _give_spans_around(runs, unroled, by_id)
    outer: dict[int, RunParts | None] = {}
    for span_id, parts in runs.items():
        parent_id = parts.span.parent_span_id
        outer[span_id] = nearest_marked(parent_id, parents(), runs, owners) if parent_id is not None else None
        _add_sub_run_call(parts, by_id, roles, outer[span_id])
    # A sort calls its key for every item, even alone: most traces hold one run.
    ordered = sorted(runs.values(), key=_started) if len(runs) > 1 else list(runs.values())
    return join_handoffs(ordered, outer, found)


def _started(parts: RunParts) -> int:
    return parts.span.start_ns


class _ParentIds:
    """Each span's parent id, gathered when a rule first walks up the trace (called): the spans
    of most traces sit directly in their run's span, which is at the top, and need no walk."""

    __slots__ = ("_by_id", "_ids")

    def __init__(self, by_id: Mapping[int, SpanRecord]) -> None:
        self._by_id = by_id
        self._ids: dict[int, int | None] | None = None

    def __call__(self) -> dict[int, int | None]:
        ids = self._ids
        if ids is None:
            ids = self._ids = {span_id: span.parent_span_id for span_id, span in self._by_id.items()}
        return ids


def _name_within_parents(runs: Mapping[int, RunParts], by_id: Mapping[int, SpanRecord]) -> None:
    """The agent's name as the span around each run gives it (`Convention.name_within`)."""
    for parts in runs.values():
        parent_id = parts.span.parent_span_id
        parent = by_id.get(parent_id) if parent_id is not None else None
        if parent is not None:
            parts.given_name = parts.convention.name_within(parts.span, parent)


def _give_roled_spans(
    runs: Mapping[int, RunParts],
    roles: Mapping[int, tuple[Convention, SpanRole]],
    by_id: Mapping[int, SpanRecord],
    parent_ids: _ParentIds,
    owners: dict[int, RunParts | None],
    tools_asking: list[tuple[Convention, SpanRecord]],
    unheld: list[tuple[Convention, SpanRecord]],
) -> None:
    """Each tool, model and retriever span to its nearest run; the model spans directly in a tool
    span, which belong to no run, to `tools_asking`; those no run holds to `unheld`."""
    walks: _Walks | None = None  # made for the first span not directly in a run span
    for span_id, (convention, role) in roles.items():
        if role == "run":
            continue
        span = by_id[span_id]
        # Most such spans sit directly in their run's span: nothing lies between to walk.
        parent = span.parent_span_id
        owner = runs.get(parent) if parent is not None else None
        if owner is None:
            if walks is None:
                walks = _Walks(runs, roles, by_id, parent_ids(), owners, tools_asking, unheld)
            owner = walks.owner(convention, span, role)
            if owner is None:
                continue
        target = owner.tools if role == "tool" else owner.retrievers if role == "retriever" else owner.models
        target.append((convention, span))


class _Walks:
    """The walks up from the spans not directly in a run span, and what they found."""

    def __init__(
        self,
        runs: Mapping[int, RunParts],
        roles: Mapping[int, tuple[Convention, SpanRole]],
        by_id: Mapping[int, SpanRecord],
        parents: Mapping[int, int | None],
        owners: dict[int, RunParts | None],
        tools_asking: list[tuple[Convention, SpanRecord]],
        unheld: list[tuple[Convention, SpanRecord]],
    ) -> None:
        self.runs, self.by_id, self.parents, self.owners = runs, by_id, parents, owners
        self.tools_asking, self.unheld = tools_asking, unheld
        self.model_or_run, self.tool_or_run = _layers(roles)
        self.in_model: dict[int, int | None] = {}
        self.in_tool: dict[int, int | None] = {}
        self.marking_checked: set[int] = set()

    def owner(self, convention: Convention, span: SpanRecord, role: SpanRole) -> RunParts | None:
        """The run the span, not directly in its run's span, is one of the `role` spans of; None
        when no run holds it, or it is a lower layer's view of a call (given to its run as such)
        or a tool's own model call."""
        parent = span.parent_span_id
        owner = nearest_marked(parent, self.parents, self.runs, self.owners)
        if owner is None:
            if role == "model":
                self.unheld.append((convention, span))
            return None
        if role == "tool" and owner.span.span_id not in self.marking_checked:
            # The span a framework's loop runs its calls under (Semantic Kernel's) may name
            # the run's framework (when the run span names none): asked once per run, of the
            # span around its first tool call not directly in it.
            self.marking_checked.add(owner.span.span_id)
            between = self.by_id.get(parent) if parent is not None else None
            if between is not None:
                owner.inner_framework = framework_marking(between)
        outer_model = (
            nearest_marked(parent, self.parents, self.model_or_run, self.in_model)
            if role == "model"
            else None
        )
        if outer_model:
            owner.model_layers.setdefault(outer_model, []).append((convention, span))
            return None
        outer_tool = nearest_marked(parent, self.parents, self.tool_or_run, self.in_tool)
        # A model call a tool made (no agent run between) is the tool's work, not the agent's.
        if role == "model" and outer_tool:
            if outer_tool == parent:
                self.tools_asking.append((convention, span))
            return None
        if role == "tool" and outer_tool:
            owner.executions.setdefault(outer_tool, []).append((convention, span))
            return None
        return owner


def _layers(
    roles: Mapping[int, tuple[Convention, SpanRole]],
) -> tuple[dict[int, int | None], dict[int, int | None]]:
    """The marks of the walks up from a span that is not directly in its run's span: model
    spans and runs, tool spans and runs (a run marks where the walk ends, with no span)."""
    # A model span inside another model span of the same run is the same call seen by a lower
    # layer (a framework's LLM span over an instrumented client's): only the outer one counts.
    # So is a tool span inside another tool span: the call's execution seen by a lower layer (an
    # MCP server continuing the caller's trace, a tool that calls a traced function).
    model_or_run = {
        span_id: span_id if role == "model" else None
        for span_id, (_, role) in roles.items()
        if role in ("model", "run")
    }
    tool_or_run = {
        span_id: span_id if role == "tool" else None
        for span_id, (_, role) in roles.items()
        if role in ("tool", "run")
    }
    return model_or_run, tool_or_run


def _give_spans_around(
    runs: Mapping[int, RunParts], unroled: Mapping[int, Convention], by_id: Mapping[int, SpanRecord]
) -> None:
    """The span without a role directly around each run that has no model, tool or retriever
    span of its own, when the run's span is its only child and an attribute of it may hold a
    conversation (`RunParts.around`): a framework's task around its agent's execution may keep
    the conversation the agent had (MLflow's CrewAI)."""
    idle = {
        parent_id: parts
        for parts in runs.values()
        if not (parts.models or parts.tools or parts.retrievers or parts.executions)
        and (parent_id := parts.span.parent_span_id) is not None
        and parent_id in unroled
        and _may_keep_messages(by_id[parent_id])
    }
    if not idle:
        return
    children = child_counts(by_id.values(), of=idle)
    for parent_id, parts in idle.items():
        if children[parent_id] == 1:
            parts.around = (unroled[parent_id], by_id[parent_id])


def _may_keep_messages(span: SpanRecord) -> bool:
    """Whether an attribute of the span may hold a conversation (`{"messages": [...]}`), before
    paying for reading it."""
    return any(isinstance(value, str) and '"messages"' in value for value in span.attributes.values())


def _give_steps(
    runs: Mapping[int, RunParts],
    unroled: Mapping[int, Convention],
    by_id: Mapping[int, SpanRecord],
    parents: Mapping[int, int | None],
    owners: dict[int, RunParts | None],
) -> None:
    """What each span without a role says of its nearest run (`Convention.step_content`)."""
    for span_id, convention in unroled.items():
        span = by_id[span_id]
        step = convention.step_content(span)
        if step is None:
            continue
        owner = nearest_marked(span.parent_span_id, parents, runs, owners)
        if owner is not None:
            owner.steps.append((span.start_ns, step))


def _absorb_turns(
    runs: dict[int, RunParts], roles: Mapping[int, tuple[Convention, SpanRole]], parent_ids: _ParentIds
) -> None:
    """Runs nested in a conversation that absorbs its turns, not through a tool span, are turns
    of it: they leave `runs`, so their spans belong to the conversation."""
    if len(runs) < 2:  # a run alone has no turns inside it to absorb
        return
    conversations = {span_id for span_id, parts in runs.items() if parts.convention.absorbs_turns(parts.span)}
    if not conversations:
        return
    parents = parent_ids()
    for span_id, parts in sorted(runs.items(), key=lambda item: item[1].span.start_ns):
        current = parts.span.parent_span_id
        walked = {span_id}  # parent ids that loop end the walk at the first span seen twice
        for _ in range(MAX_DEPTH):
            if current is None or current in walked or roles.get(current, (None, None))[1] == "tool":
                break
            walked.add(current)
            if current in runs:
                outer = runs[current]
                if current in conversations:
                    if outer.first_turn_agent is None:
                        outer.first_turn_agent = parts.convention.run_content(parts.span).agent_name
                    del runs[span_id]
                break
            current = parents.get(current)


def _add_sub_run_call(
    parts: RunParts,
    by_id: Mapping[int, SpanRecord],
    roles: Mapping[int, tuple[Convention, SpanRole]],
    outer: RunParts | None,
) -> None:
    """A run nested in another run's spans, not under a tool span, may be the answer to one of
    the outer model's tool-call parts (a managed agent): its convention says what call it was."""
    if outer is None:
        return
    parent_id = parts.span.parent_span_id
    parent = by_id.get(parent_id) if parent_id is not None else None
    if parent is not None and roles.get(parent.span_id, (None, None))[1] == "tool":
        return
    call = parts.convention.sub_run_call(parts.span, parent)
    if call is not None:
        outer.sub_runs.append(call)
