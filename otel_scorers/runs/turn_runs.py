"""Runs that are turns of one run: an agent's loop traced one span per turn.

An instrumentation may write one span per turn of an agent's loop (one model call and the tools
it asked for), side by side under the span of the run, each marked as the agent's: read as runs,
one run would be scored as many, all but the last without an answer. Of the runs a vocabulary
inferred from the trace found, sibling runs under one parent, each holding one model call of its
own, are turns of one loop when each turn but the last recorded no answer and the turn after it
was given the same request: the agent went on with its loop (another agent may go on with it: a
handoff). A run with an answer ends its loop: a sibling after it is a run of its own, as is one
given another request (a pipeline's next agent) or one holding several model calls (an agent's
whole invocation, not a turn of it).

The span around one loop's turns and nothing else, given no role, is the run: its turns join it
as its steps (`invocations.py`, which names it and finds its handoffs when its span is named
after code, `code_named_runs.py`), as they do when it is a run already. Turns directly under a
tool span (an agent a tool ran), or beside other loops, are joined into the loop's first turn:
its span is the run, the later turns its steps (put under it), their calls its calls, the last
turn's answer its answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from otel_scorers.conventions import Convention, SpanRole
from otel_scorers.conventions.base import RunSpanContent
from otel_scorers.conventions.described import DescribedConvention
from otel_scorers.runs.ancestry import MAX_DEPTH
from otel_scorers.span_record import SpanRecord

_MAX_REMEMBERED = 64


class _TurnReader(DescribedConvention):
    """A reader's later turns of a run, read as steps of it: each says what its span says."""

    def step_content(self, span: SpanRecord) -> RunSpanContent | None:
        return self.run_content(span)


_TURN_READERS: dict[DescribedConvention, _TurnReader] = {}


def _turn_reader(reader: DescribedConvention) -> _TurnReader:
    found = _TURN_READERS.get(reader)
    if found is None:
        if len(_TURN_READERS) >= _MAX_REMEMBERED:
            _TURN_READERS.clear()
        found = _TURN_READERS[reader] = _TurnReader(reader.description)
    return found


def join_turns(
    by_id: dict[int, SpanRecord],
    roles: dict[int, tuple[Convention, SpanRole]],
    unroled: dict[int, Convention],
    reader: Convention,
) -> None:
    """Join the runs `reader` (a vocabulary inferred from the trace) found that are turns of one
    run (module doc) into the first turn's."""
    if not isinstance(reader, DescribedConvention):
        return
    siblings: dict[int | None, list[SpanRecord]] = {}
    for span_id, (found, role) in roles.items():
        if role == "run" and found is reader:
            span = by_id[span_id]
            siblings.setdefault(span.parent_span_id, []).append(span)
    siblings = {parent: turns for parent, turns in siblings.items() if len(turns) > 1}
    if not siblings:
        return
    calls = _model_calls_of({span.span_id for turns in siblings.values() for span in turns}, by_id, roles)
    for turns in siblings.values():
        if all(calls.get(span.span_id) == 1 for span in turns):
            _join(sorted(turns, key=lambda span: span.start_ns), by_id, roles, unroled, reader)


def _model_calls_of(
    runs: set[int], by_id: Mapping[int, SpanRecord], roles: Mapping[int, tuple[Convention, SpanRole]]
) -> dict[int, int]:
    """How many model calls each of these runs holds itself (none of another run or a tool)."""
    counts: dict[int, int] = {}
    for span_id, (_, role) in roles.items():
        if role != "model":
            continue
        current = by_id[span_id].parent_span_id
        for _ in range(MAX_DEPTH):
            if current is None or current not in by_id:
                break
            if current in runs:
                counts[current] = counts.get(current, 0) + 1
                break
            if current in roles:
                break
            current = by_id[current].parent_span_id
    return counts


def _join(
    turns: list[SpanRecord],
    by_id: dict[int, SpanRecord],
    roles: dict[int, tuple[Convention, SpanRole]],
    unroled: dict[int, Convention],
    reader: DescribedConvention,
) -> None:
    parent = by_id.get(turns[0].parent_span_id) if turns[0].parent_span_id is not None else None
    held = roles.get(parent.span_id) if parent is not None else None
    if held is not None and held[1] == "run":
        return  # turns inside a run: its steps (`invocations.py`)
    loops = _loops(turns, reader)
    if len(loops) == 1 and parent is not None and held is None:
        # The span around the loop's turns and nothing else is the run (`invocations.py` joins
        # the turns into it as its steps).
        roles[parent.span_id] = (reader, "run")
        unroled.pop(parent.span_id, None)
        return
    for loop in loops:
        for turn in loop[1:]:
            del roles[turn.span_id]
            unroled[turn.span_id] = _turn_reader(reader)
            by_id[turn.span_id] = replace(turn, parent_span_id=loop[0].span_id)


def _loops(turns: list[SpanRecord], reader: DescribedConvention) -> list[list[SpanRecord]]:
    """The turns in loops: a turn given the request of the turn before it, which gave no answer,
    goes on with its loop."""
    loops = [[turns[0]]]
    before = reader.run_content(turns[0])
    for turn in turns[1:]:
        content = reader.run_content(turn)
        if _answered(before) or not _same_request(before, content):
            loops.append([turn])
        else:
            loops[-1].append(turn)
        before = content
    return loops


def _answered(content: RunSpanContent) -> bool:
    return content.output_text is not None or content.output.captured


def _same_request(before: RunSpanContent, after: RunSpanContent) -> bool:
    if before.input_text is not None or after.input_text is not None:
        return before.input_text == after.input_text
    return before.input.captured and before.input == after.input
