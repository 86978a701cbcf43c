"""Run building, phase 2 (one run per agent invocation): agent spans that are not runs.

Instrumentations mark more spans as agents than there are invocations: a span per turn inside
the run, a graph's nodes, an unnamed wrapper around the run, a framework's runner span holding
the request beside the agent's own span. The rules, the same for every convention, where a run's
*scope* is its nearest ancestor that is a run or a tool span (a run under a tool span is a
sub-agent, always a run of its own):

- a step: a run inside another run's scope (not under a tool span) that has no name while the
  run around it has one, or that was asked the same request, or whose agent runs there more
  than once (a graph's node, a turn of its loop), or that is all a named run doing nothing
  itself holds while another span records the same agent beside it (a graph's node recorded by
  two instrumentations), is a step of it: its spans join it;
- a wrapper: an agent span that does nothing itself (no model, tool or retriever span of its
  own) around runs, directly or around other such spans (a runner's span around an
  instrumentation's span of the agent around the framework's own), or whose time encloses the
  runs of its scope, is not a run: the first of them takes what it holds where its own span lacks
  it (`RunParts.wrapper`, the innermost wrapper's), when it is all the wrapper holds (a span
  around other spans too holds what they did together); unless the span directly around the run
  records a request of its own other than that run's: an agent whose code asked another agent
  something else is an invocation of its own, its model calls untraced;
- an empty step: an agent span that does nothing itself, inside or beside a run that does
  something, while it runs, is not a run either (a graph's node recorded beside the graph's run,
  a marker of the agent a run hands over to), unless it failed or its convention reads it as a
  call of the run around it (a managed agent).
"""

from __future__ import annotations

from collections.abc import Mapping

from otel_scorers.conventions import Convention, SpanRole
from otel_scorers.runs.ancestry import MAX_DEPTH, child_counts
from otel_scorers.runs.code_named_runs import FirstJoined
from otel_scorers.runs.run_parts import RunParts, agent_name_of, content_of
from otel_scorers.runs.run_text import reduced_text, span_text
from otel_scorers.span_record import SpanRecord

_TOOL = -1


def one_run_per_invocation(
    runs: dict[int, RunParts],
    roles: Mapping[int, tuple[Convention, SpanRole]],
    by_id: Mapping[int, SpanRecord],
    parents: Mapping[int, int | None],
) -> bool:
    """Remove from `runs` the agent spans that are steps or wrappers of another run; whether
    any was."""
    if len(runs) < 2:
        return False
    before = len(runs)
    scopes = _Scopes(runs, roles, parents)
    nested = [parts for parts in runs.values() if scopes.run_around(parts) is not None]
    turns = _turns(nested, scopes) if len(nested) > 1 else set()
    nodes = _only_nodes(nested, scopes)
    first = FirstJoined()
    for step in sorted(nested, key=lambda parts: parts.span.start_ns, reverse=True):
        outer = scopes.run_around(step)
        if outer is not None and (
            step.span.span_id in turns or step.span.span_id in nodes or _is_step(step, outer)
        ):
            first.joined(step, outer)
            _merge(step, outer)
            scopes.remove(step, outer)
    first.name(runs)
    idle = [parts for parts in runs.values() if not _works(parts)]
    children: dict[int, int] | None = None  # spans directly inside each span, counted when needed
    for empty in sorted(idle, key=lambda parts: parts.span.start_ns) if len(runs) > 1 else ():
        if empty.span.span_id not in runs:
            continue
        inside = scopes.wrapped_by(empty)
        if inside is not None and not _asked_otherwise(empty, inside):
            # What a span around other spans too holds is theirs together, not the run's alone.
            # Of wrappers around wrappers, the innermost lends: it is nearest to the run.
            if inside.wrapper is None or inside.wrapper.span.start_ns <= empty.span.start_ns:
                children = children if children is not None else child_counts(by_id.values())
                if _only_child(inside, empty, by_id, children):
                    inside.wrapper = empty
            scopes.remove(empty, inside)
            continue
        beside = scopes.working_beside(empty)
        if beside is not None and not _invoked(empty, by_id):
            scopes.remove(empty, beside)
    return len(runs) < before


class _Scopes:
    """Each run's scope, kept as runs are removed (a removed run's scope is the run it joined)."""

    def __init__(
        self,
        runs: dict[int, RunParts],
        roles: Mapping[int, tuple[Convention, SpanRole]],
        parents: Mapping[int, int | None],
    ) -> None:
        self.runs = runs
        self.joined: dict[int, int] = {}
        self.scope: dict[int, int | None] = {}
        for span_id, parts in runs.items():
            self.scope[span_id] = _nearest(parts.span.parent_span_id, runs, roles, parents)

    def _live(self, span_id: int | None) -> int | None:
        for _ in range(MAX_DEPTH):
            if span_id is None or span_id not in self.joined:
                return span_id
            span_id = self.joined[span_id]
        return None

    def scope_of(self, parts: RunParts) -> int | None:
        return self._live(self.scope.get(parts.span.span_id))

    def run_around(self, parts: RunParts) -> RunParts | None:
        scope = self.scope_of(parts)
        return self.runs.get(scope) if scope is not None and scope >= 0 else None

    def remove(self, parts: RunParts, into: RunParts) -> None:
        del self.runs[parts.span.span_id]
        self.joined[parts.span.span_id] = into.span.span_id

    def wrapped_by(self, empty: RunParts) -> RunParts | None:
        """The first working run inside `empty` (directly or inside agent spans that do nothing
        either), or in its scope within its time."""
        scope = self.scope_of(empty)
        inside = [
            parts
            for parts in self.runs.values()
            if parts is not empty
            and _works(parts)
            and (
                self._within(parts, empty)
                or (self.scope_of(parts) == scope and _encloses(empty.span, parts.span))
            )
        ]
        return min(inside, key=lambda parts: parts.span.start_ns) if inside else None

    def _within(self, parts: RunParts, empty: RunParts) -> bool:
        """`parts` is in the scope of `empty`, directly or inside agent spans that do nothing
        either: an agent span around another that only wraps the run wraps it too (a runner's
        span around an instrumentation's span of the agent, around the framework's own)."""
        scope = self.scope_of(parts)
        for _ in range(MAX_DEPTH):
            if scope == empty.span.span_id:
                return True
            around = self.runs.get(scope) if scope is not None and scope >= 0 else None
            if around is None or _works(around):
                return False
            scope = self.scope_of(around)
        return False

    def working_beside(self, empty: RunParts) -> RunParts | None:
        """The working run `empty` sits inside, or one of its scope that runs while it does."""
        around = self.run_around(empty)
        if around is not None and _works(around):
            return around
        scope = self.scope_of(empty)
        return next(
            (
                parts
                for parts in self.runs.values()
                if parts is not empty
                and _works(parts)
                and self.scope_of(parts) == scope
                and _overlap(empty.span, parts.span)
            ),
            None,
        )


def _nearest(
    span_id: int | None,
    runs: Mapping[int, RunParts],
    roles: Mapping[int, tuple[Convention, SpanRole]],
    parents: Mapping[int, int | None],
) -> int | None:
    """The id of the nearest run span at or above `span_id`, `_TOOL` when a tool span comes
    first (a sub-agent's scope is that call, shared with nothing), None at the trace's root."""
    walked = 0
    while span_id is not None and walked < MAX_DEPTH:
        if span_id in runs:
            return span_id
        role = roles.get(span_id)
        if role is not None and role[1] == "tool":
            return _TOOL - span_id  # distinct per tool span, never a span id
        span_id = parents.get(span_id)
        walked += 1
    return None


def _turns(nested: list[RunParts], scopes: _Scopes) -> set[int]:
    """The runs of an agent that runs more than once directly inside one run: a graph node or
    a turn the run's loop makes, not a sub-agent (those a run invokes through tool calls)."""
    seen: dict[tuple[int, str | None], list[int]] = {}
    for parts in nested:
        outer = scopes.run_around(parts)
        if outer is not None:
            seen.setdefault((outer.span.span_id, agent_name_of(parts)), []).append(parts.span.span_id)
    return {span_id for found in seen.values() if len(found) > 1 for span_id in found}


def _only_nodes(nested: list[RunParts], scopes: _Scopes) -> set[int]:
    """The runs that are all a named run around them holds, when that run does nothing itself
    and names another agent, and another agent span records the same agent while it runs: a
    graph's one node, recorded by the chain's instrumentation inside the graph's run and by the
    graph's beside it (`invoke_agent agent` in and beside `invoke_agent weather_agent`), is a step
    as its turns are when it runs twice. A run recorded once is the agent a runner's named span
    (`AgentRunner.run`) or an agent calling it directly wraps: that span gives way to it."""
    inside: dict[int, list[RunParts]] = {}
    for parts in nested:
        outer = scopes.run_around(parts)
        if outer is not None:
            inside.setdefault(outer.span.span_id, []).append(parts)
    found: set[int] = set()
    for outer_id, held in inside.items():
        outer = scopes.runs[outer_id]
        if len(held) != 1 or _works(outer):
            continue
        node, scope = held[0], scopes.scope_of(outer)
        beside = [
            other
            for other in scopes.runs.values()
            if other is not outer and _overlap(other.span, node.span) and scopes.scope_of(other) == scope
        ]
        if not beside:  # asked first: reading the names reads the run spans
            continue
        name, outer_name = agent_name_of(node), agent_name_of(outer)
        if name is None or outer_name is None or name == outer_name:
            continue
        if any(agent_name_of(other) == name for other in beside):
            found.add(node.span.span_id)
    return found


def _is_step(step: RunParts, outer: RunParts) -> bool:
    name = agent_name_of(step)
    if name is None:
        return agent_name_of(outer) is not None
    request = _request(step)
    return request is not None and request == _request(outer)


def _request(parts: RunParts) -> str | None:
    """The request the run span holds, its structure reduced; None when it holds none."""
    text = content_of(parts).input_text
    return reduced_text(text, "input") if text is not None else None


def _asked_otherwise(empty: RunParts, inside: RunParts) -> bool:
    """The agent span directly around the run was asked a request of its own, not the run's: an
    agent whose code asked another agent something else (its model calls, if any, not traced) is
    an invocation of its own, not the other's wrapper. (A span around that one, wrapping it, is
    not read: what it holds is read only if it is lent.)"""
    if inside.span.parent_span_id != empty.span.span_id:
        return False
    request = span_text(content_of(empty), "input")
    if request is None or request.text is None:
        return False
    inner = span_text(content_of(inside), "input")
    return inner is not None and inner.text is not None and inner.text != request.text


def _invoked(parts: RunParts, by_id: Mapping[int, SpanRecord]) -> bool:
    """The run did something though no span of its own says so: it failed, or its convention
    reads it as a call the run around it made (a managed agent answering a tool call)."""
    if parts.span.status == "error":
        return True
    parent_id = parts.span.parent_span_id
    parent = by_id.get(parent_id) if parent_id is not None else None
    return parts.convention.sub_run_call(parts.span, parent) is not None


def _only_child(
    run: RunParts, wrapper: RunParts, by_id: Mapping[int, SpanRecord], children: Mapping[int, int]
) -> bool:
    """The run's span is all the wrapper's span holds: each span from the run's up to the
    wrapper's is its parent's only child."""
    current: SpanRecord | None = run.span
    for _ in range(MAX_DEPTH):
        parent_id = current.parent_span_id if current is not None else None
        if parent_id is None or children.get(parent_id) != 1:
            return False
        if parent_id == wrapper.span.span_id:
            return True
        current = by_id.get(parent_id)
    return False


def _merge(step: RunParts, outer: RunParts) -> None:
    outer.take_work(step)
    outer.steps.extend(step.steps)


def _works(parts: RunParts) -> bool:
    """The run has spans of its own: a model call, a tool call or a retrieval."""
    return bool(parts.models or parts.tools or parts.retrievers or parts.executions)


def _encloses(outer: SpanRecord, inner: SpanRecord) -> bool:
    return outer.start_ns <= inner.start_ns and (inner.end_ns or inner.start_ns) <= (
        outer.end_ns or outer.start_ns
    )


def _overlap(one: SpanRecord, other: SpanRecord) -> bool:
    return one.start_ns <= (other.end_ns or other.start_ns) and other.start_ns <= (one.end_ns or one.start_ns)
