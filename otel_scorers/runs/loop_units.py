"""The unit of work around an agent's loop, where a described tracer's run clauses find no run.

A tracer the project knows, over a framework its description was not written from, may have its
`tool` and `model` clauses read the spans while its `run` clause marks none of them, and the
vocabulary the trace shows says no more (`unrun_descriptions`). Its model calls and tool calls
that no run holds (outside every run and tool span) are still one agent's loop: a model asked,
the tools it asked for run, the model asked again. The span enclosing them all, the lowest one,
is the unit of work that ran the loop: the run (an agent one of its tools ran, a run by its place
under the tool span, is named alike). When several spans directly inside it each hold
model calls and tool calls of their own, each is a loop: each is a run. A trace without a tool
call holds no loop (an application asking a model once is no agent), and neither does a trace
whose calls were read by no description.

The run is read by the reader that claimed its span, its request and answer from its model calls
where its span records none; its agent named by the keys every reader shares, else by its span's
own name, when that name is a name (`weather_agent`; not a kind, a label or a path to code), or
where those keys name the step of a graph each span ran in (`inferred_names.name_keys_name_steps`:
`gen_ai.agent.name = model` on the graph's span around its node `model`), by its span's name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from otel_scorers.conventions import Convention, SpanRole
from otel_scorers.conventions.base import RunSpanContent
from otel_scorers.conventions.described import DescribedConvention
from otel_scorers.conventions.description import ConventionDescription
from otel_scorers.conventions.inferred_kinds import KINDS, normalised
from otel_scorers.conventions.inferred_names import name_keys_name_steps
from otel_scorers.runs.agent_names import named_by_keys
from otel_scorers.runs.ancestry import MAX_DEPTH
from otel_scorers.span_record import SpanRecord

#: A span name that may be an agent's: one identifier, no spaces, dots or brackets.
_A_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_MAX_REMEMBERED = 64


class _UnitReader(DescribedConvention):
    """A described reader's unit of work around a loop, named where its run clauses name nothing."""

    def __init__(self, description: ConventionDescription, by_keys: bool) -> None:
        super().__init__(description)
        self._by_keys = by_keys

    def run_content(self, span: SpanRecord) -> RunSpanContent:
        content = super().run_content(span)
        if content.agent_name is None:
            content.agent_name = (named_by_keys(span) if self._by_keys else None) or _own_name(span)
        return content


_UNIT_READERS: dict[tuple[DescribedConvention, bool], _UnitReader] = {}


def unit_reader(reader: DescribedConvention, by_keys: bool) -> DescribedConvention:
    """`reader`, naming the units of work it reads as runs where its run clauses name nothing."""
    found = _UNIT_READERS.get((reader, by_keys))
    if found is None:
        if len(_UNIT_READERS) >= _MAX_REMEMBERED:
            _UNIT_READERS.clear()
        found = _UNIT_READERS[reader, by_keys] = _UnitReader(reader.description, by_keys)
    return found


def _own_name(span: SpanRecord) -> str | None:
    name = span.name
    if not _A_NAME.match(name) or normalised(name) in KINDS:
        return None
    return name


def loop_units(
    by_id: Mapping[int, SpanRecord],
    roles: dict[int, tuple[Convention, SpanRole]],
    unroled: dict[int, Convention],
) -> None:
    """Make a run of the unit of work around the loop no run holds (module doc)."""
    # On every trace, so in loops rather than calls: the (reader, role) pairs, few, gathered in
    # C, asked whether a described reader read a model call and a tool call (a class test: a
    # protocol's `isinstance` is slow); most traces go no further.
    given = set(roles.values())
    described: set[SpanRole] = set()
    runs = False
    for reader, role in given:
        if role == "run":
            runs = True
        elif DescribedConvention in type(reader).__mro__:
            described.add(role)
    if "model" not in described or "tool" not in described:
        return
    if runs:
        placed = [span_id for span_id, (_, role) in roles.items() if role == "run"]
        for span_id in placed:
            if not _under_tool(span_id, by_id, roles):
                return  # a run found at the top: the trace's loop is read
    else:
        placed = []  # runs under tool spans
    loose: dict[int, SpanRole] = {}  # calls no run or tool span holds, by span id
    for span_id, (reader, role) in roles.items():
        if (
            (role == "model" or role == "tool")
            and DescribedConvention in type(reader).__mro__
            and _loose(span_id, by_id, roles)
        ):
            loose[span_id] = role
    if "model" not in loose.values() or "tool" not in loose.values():
        return
    paths = {span_id: _ancestors(span_id, by_id) for span_id in loose}
    common = _lowest_common(list(paths.values()))
    if common is None or common in roles:
        return
    loops = _loops_inside(common, paths, loose)
    # The keys every reader shares may name the step of a graph each span ran in, not an agent.
    by_keys = not name_keys_name_steps(list(by_id.values()))
    for span_id in loops or [common]:
        claimed = unroled.get(span_id)
        if not isinstance(claimed, DescribedConvention) or span_id in roles:
            continue
        del unroled[span_id]
        roles[span_id] = (unit_reader(claimed, by_keys), "run")
    for span_id in placed:  # agents the loop's tools ran, runs by their place: named alike
        reader = roles[span_id][0]
        if (
            type(reader) is not _UnitReader
            and isinstance(reader, DescribedConvention)
            and reader.role(by_id[span_id]) != "run"
        ):
            roles[span_id] = (unit_reader(reader, by_keys), "run")


def _under_tool(
    span_id: int, by_id: Mapping[int, SpanRecord], roles: Mapping[int, tuple[Convention, SpanRole]]
) -> bool:
    """A tool span is above the run (an agent a tool ran)."""
    current = by_id[span_id].parent_span_id
    for _ in range(MAX_DEPTH):
        if current is None or current not in by_id:
            return False
        if roles.get(current, (None, None))[1] == "tool":
            return True
        current = by_id[current].parent_span_id
    return False


def _loose(
    span_id: int, by_id: Mapping[int, SpanRecord], roles: Mapping[int, tuple[Convention, SpanRole]]
) -> bool:
    current = by_id[span_id].parent_span_id
    for _ in range(MAX_DEPTH):
        if current is None or current not in by_id:
            return True
        if current in roles:
            return False
        current = by_id[current].parent_span_id
    return False


def _ancestors(span_id: int, by_id: Mapping[int, SpanRecord]) -> list[int]:
    """The span's ancestors in the trace, the root first."""
    found: list[int] = []
    current = by_id[span_id].parent_span_id
    for _ in range(MAX_DEPTH):
        if current is None or current not in by_id:
            break
        found.append(current)
        current = by_id[current].parent_span_id
    found.reverse()
    return found


def _lowest_common(paths: list[list[int]]) -> int | None:
    common: int | None = None
    for level in zip(*paths, strict=False):
        if any(span_id != level[0] for span_id in level):
            break
        common = level[0]
    return common


def _loops_inside(common: int, paths: Mapping[int, list[int]], loose: Mapping[int, SpanRole]) -> list[int]:
    """The spans directly inside `common` each holding a loop (model calls, and tool calls between
    them), when there are two or more."""
    held: dict[int, list[SpanRole]] = {}
    for span_id, path in paths.items():
        at = path.index(common) + 1
        if at < len(path):
            held.setdefault(path[at], []).append(loose[span_id])
    # A loop asks a model again after its tools ran: a turn (one model call) is no loop.
    loops = [span_id for span_id, kinds in held.items() if kinds.count("model") > 1 and "tool" in kinds]
    return loops if len(loops) > 1 else []
