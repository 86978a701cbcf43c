"""Walking a trace's parent links: parent ids that loop cost what any other spans cost."""

from __future__ import annotations

from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanRecord

from ..spans import span
from ..waiting import cpu_seconds

PAIRS = 1023


def _run() -> SpanRecord:
    return span("invoke_agent trip", gen_ai__operation__name="invoke_agent", gen_ai__agent__name="trip")


def _tool(parent: SpanRecord | None) -> SpanRecord:
    return span(
        "execute_tool search", parent, gen_ai__operation__name="execute_tool", gen_ai__tool__name="search"
    )


def _flat() -> list[SpanRecord]:
    run = _run()
    return [run, *(_tool(run) for _ in range(2 * PAIRS))]


def _cycles() -> list[SpanRecord]:
    """One run, and beside it 1,023 pairs of tool spans each the other's parent."""
    spans = [_run()]
    for _ in range(PAIRS):
        first, second = _tool(None), _tool(None)
        first.parent_span_id, second.parent_span_id = second.span_id, first.span_id
        spans.extend((first, second))
    return spans


def test_a_trace_of_parent_cycles_builds_in_about_the_time_of_a_flat_trace_of_its_size() -> None:
    flat, cycles = _flat(), _cycles()
    assert len(flat) == len(cycles)
    (flat_run,) = build_runs(flat)
    (lone_run,) = build_runs(cycles)
    assert len(flat_run.tool_calls) == 2 * PAIRS
    assert lone_run.tool_calls == ()  # the looping spans belong to no run
    flat_s = cpu_seconds(lambda: build_runs(flat))
    cycles_s = cpu_seconds(lambda: build_runs(cycles))
    # Each cycle walked to a depth limit took 91x the flat build; walked once, about 1x.
    assert cycles_s < 3 * flat_s, (cycles_s, flat_s)
