"""A described tracer over a framework its description was not written from: in a trace in which
no rule found a run, though described readers claimed spans (their tool and model clauses read
the tracer's vocabulary, their run clauses found nothing), those readers' spans are read by the
vocabulary the trace itself shows (`conventions.inferred_reader_without`): the rules that read a
vocabulary nobody described, applied to the described one's spans, its namespace taken as
unknown. The reading stands only when it finds runs, its own or, when its kind key marks no agent
(`chain`, `span`), the root span around model calls no run holds, as for any vocabulary that marks
none (`top_runs`); else the trace keeps its roles. A trace whose
only runs are agents tools invoked (`tool_invoked_agents`) is read so too: the agent that called
the tools was not found. Where this reading finds no run either, the unit of work at the top of
the trace is (`described_tops`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Protocol, TypeVar

from otel_scorers.conventions import Convention, SpanRole, inferred_reader_without
from otel_scorers.conventions.described import DescribedConvention
from otel_scorers.runs.ancestry import MAX_DEPTH
from otel_scorers.runs.described_tops import described_top_runs
from otel_scorers.runs.loop_units import loop_units
from otel_scorers.runs.tool_invoked_agents import idle_invoked_runs, only_tool_invoked_runs
from otel_scorers.runs.top_runs import top_level_runs
from otel_scorers.runs.turn_runs import join_turns
from otel_scorers.span_record import SpanRecord


class Roles(Protocol):
    """A trace's roles as `span_roles` gives them."""

    by_id: dict[int, SpanRecord]
    roles: dict[int, tuple[Convention, SpanRole]]
    unroled: dict[int, Convention]


R = TypeVar("R", bound=Roles)


def runs_of_described_spans(trace: R) -> R:
    """`trace`, with the runs found in the described readers' spans by the vocabulary they show
    (module doc) when it holds none."""
    # On every trace, so in loops rather than calls (each a frame): the (reader, role) pairs, few,
    # gathered in C, asked whether one is a run, then whether a described reader (a class test:
    # a protocol's `isinstance` is slow) claimed a span.
    given = set(trace.roles.values())
    for _, role in given:
        if role == "run":
            if not only_tool_invoked_runs(trace.by_id, trace.roles):
                return trace
            break
    claimed = set(trace.unroled.values())
    for reader, _ in given:
        claimed.add(reader)
    for reader in claimed:
        if DescribedConvention in type(reader).__mro__:
            _read_by_inference(trace.by_id, trace.roles, trace.unroled, claimed)
            loop_units(trace.by_id, trace.roles, trace.unroled)  # the loop's own span, if any,
            described_top_runs(trace.by_id, trace.roles, trace.unroled)  # before the root's
            break
    return trace


def _read_by_inference(
    by_id: dict[int, SpanRecord],
    roles: dict[int, tuple[Convention, SpanRole]],
    unroled: dict[int, Convention],
    claimed: set[Convention],
) -> None:
    readers = {c.name: c for c in claimed if DescribedConvention in type(c).__mro__}
    if not readers:
        return
    names = frozenset(readers)
    spans = [
        span
        for span_id, span in by_id.items()
        if (found := roles.get(span_id, (unroled.get(span_id), None))[0]) is None or found.name in names
    ]
    inferred = inferred_reader_without(names, spans, lambda ids: all_working(ids, by_id, roles))
    if inferred is None:
        return
    given = {span.span_id: inferred.role(span) for span in spans if inferred.detect(span)}
    for span_id in idle_invoked_runs(by_id, roles, given):
        given[span_id] = None
    if "run" not in given.values():
        _read_at_top(by_id, roles, unroled, inferred, given)
        return
    _apply(roles, unroled, inferred, given)
    join_turns(by_id, roles, unroled, inferred)


def _read_at_top(
    by_id: Mapping[int, SpanRecord],
    roles: dict[int, tuple[Convention, SpanRole]],
    unroled: dict[int, Convention],
    inferred: Convention,
    given: Mapping[int, SpanRole | None],
) -> None:
    """The inferred reading, which names model and tool calls but no run, with the root span around
    calls no run holds as the run (`top_runs`): a kind key that marks no agent leaves the run to
    the rules every reader shares. It stands only when that finds a run."""
    trial_roles, trial_unroled = dict(roles), dict(unroled)
    _apply(trial_roles, trial_unroled, inferred, given)
    roots = [span_id for span_id, span in by_id.items() if span.parent_span_id is None]
    top_level_runs(roots, by_id, trial_roles, trial_unroled)
    for span_id in given:
        if trial_roles.get(span_id, (None, None))[1] == "run":
            trial_roles[span_id] = (inferred, "run")
    if any(role == "run" for _, role in trial_roles.values()):
        roles.clear()
        roles.update(trial_roles)
        unroled.clear()
        unroled.update(trial_unroled)


def _apply(
    roles: dict[int, tuple[Convention, SpanRole]],
    unroled: dict[int, Convention],
    inferred: Convention,
    given: Mapping[int, SpanRole | None],
) -> None:
    """The roles `given` by the inferred reader over the trace's; a span it claims without a role
    is its own when no reader gave it one."""
    for span_id, role in given.items():
        if role is None:
            if span_id not in roles:
                unroled[span_id] = inferred
            continue
        roles[span_id] = (inferred, role)
        unroled.pop(span_id, None)


def all_working(
    span_ids: Collection[int],
    by_id: Mapping[int, SpanRecord],
    roles: Mapping[int, tuple[Convention, SpanRole]],
) -> bool:
    """Each of these spans has a model or tool span under it."""
    working: set[int] = set()
    for span_id, (_, role) in roles.items():
        if role not in ("model", "tool"):
            continue
        current = by_id[span_id].parent_span_id
        for _ in range(MAX_DEPTH):
            if current is None or current in working:
                break
            if current in span_ids:
                working.add(current)
            parent = by_id.get(current)
            current = parent.parent_span_id if parent is not None else None
    return working >= set(span_ids)
