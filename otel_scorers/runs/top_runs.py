"""Run building, phase 1, last: the unit of work an application traced at the top of a trace.

An instrumentation that traces an application's own functions in a vocabulary that marks no agent
(LangSmith's `traceable`, whose run types are `chain`, `llm`, `tool`: a description without the
run's `when`, `Convention.run_at_top`) writes the function that runs an agent's loop as the
trace's root span, a kind of work its reader gives no role. Once every other rule spoke, such a
root span is the agent's run when model calls are under it with no run or tool span between:
calls no run holds are its own (an agent a tool runs is the tool's, found by its place under the
tool span; the calls inside a run found otherwise stop at that run). Named, given its request and
answer, by the reader that claimed it. A root span that records neither a request nor an answer
around one span only, of the same reader and given no role either, that records them, is the
application's wrapper of that span (a trace opened around one call of the agent): the span
inside is the unit of work. A root span such a reader reads as a tool call (a vocabulary that
marks an agent's function and a tool's alike) was called by no model: it is the unit of work too.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from otel_scorers.conventions import Convention, SpanRole
from otel_scorers.conventions.base import NOT_CAPTURED
from otel_scorers.runs.ancestry import MAX_DEPTH
from otel_scorers.span_record import SpanRecord


def top_level_runs(
    roots: Collection[int],
    by_id: Mapping[int, SpanRecord],
    roles: dict[int, tuple[Convention, SpanRole]],
    unroled: dict[int, Convention],
    any_reader: bool = False,
) -> None:
    """Make a run of each root span (`roots`: the ids of the trace's spans without a parent,
    a trace's one or few) whose reader marks no agent (`Convention.run_at_top`) that holds
    model calls no run holds (see the module's docstring), or that reader reads as a tool call
    (whichever reader: one inferred from the trace too); with `any_reader`, of each root span a
    reader claimed without a role, whatever its vocabulary marks."""
    # One walk of the trace's few roots, in line: this runs for most traces, whose roots are none.
    tools: set[int] = set()
    tops: set[int] = set()
    for span_id in roots:
        given = roles.get(span_id)
        if given is not None and given[1] == "tool" and given[0].run_at_top(by_id[span_id]):
            tools.add(span_id)
        reader = unroled.get(span_id)
        if reader is not None and (any_reader or reader.run_at_top(by_id[span_id])):
            tops.add(span_id)
    if not tops and not tools:
        return
    roots = _units_within_wrappers(tops, by_id, unroled) | tools
    found: set[int] = set()
    for span_id, (_, role) in roles.items():
        if role != "model":
            continue
        current = by_id[span_id].parent_span_id
        for _ in range(MAX_DEPTH):
            if current is None or current not in by_id:
                break  # its root was not exported
            if current in roots:
                found.add(current)
                break
            if current in roles:
                break  # the call is a run's or a tool's
            current = by_id[current].parent_span_id
    for span_id in found:
        reader = unroled.pop(span_id) if span_id in unroled else roles[span_id][0]
        roles[span_id] = (reader, "run")
    if found & tools:
        _loops_under_tools(by_id, roles)


def _units_within_wrappers(
    roots: set[int], by_id: Mapping[int, SpanRecord], unroled: dict[int, Convention]
) -> set[int]:
    """`roots` with each root that wraps one span of its reader only (see the module's docstring)
    replaced by that span. What the spans record is read last, for the few roots around one span."""
    inside: dict[int, list[int]] = {span_id: [] for span_id in roots}
    for span in by_id.values():
        if span.parent_span_id in inside:
            inside[span.parent_span_id].append(span.span_id)
    units = set(roots)
    for span_id, children in inside.items():
        reader = unroled[span_id]
        if len(children) != 1 or unroled.get(children[0]) is not reader:
            continue
        only = by_id[children[0]]
        if _records_nothing(reader, by_id[span_id]) and not _records_nothing(reader, only):
            units.discard(span_id)
            units.add(only.span_id)
    return units


def _records_nothing(reader: Convention, span: SpanRecord) -> bool:
    content = reader.run_content(span)
    return (
        content.input is NOT_CAPTURED
        and content.output is NOT_CAPTURED
        and content.input_text is None
        and content.output_text is None
    )


def _loops_under_tools(
    by_id: Mapping[int, SpanRecord], roles: dict[int, tuple[Convention, SpanRole]]
) -> None:
    """In a trace whose unit of work its reader read as a tool call (a vocabulary that marks an
    agent's function and a tool's alike), a span read as a tool call directly under another,
    around model calls and tool calls of its own (a loop), is the agent that tool ran."""
    nested = {
        span_id
        for span_id, (reader, role) in roles.items()
        if role == "tool"
        and reader.run_at_top(by_id[span_id])
        and roles.get(by_id[span_id].parent_span_id or 0, (None, None))[1] == "tool"
    }
    holds: dict[SpanRole, set[int]] = {"model": set(), "tool": set()}
    for span_id, (_, role) in roles.items():
        parent = by_id[span_id].parent_span_id
        if role in holds and parent in nested:
            holds[role].add(parent)
    for span_id in holds["model"] & holds["tool"]:
        roles[span_id] = (roles[span_id][0], "run")
