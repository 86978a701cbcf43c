"""Traces read from files are built whole: a trace is not built while its spans are still
coming, however many there are."""

from __future__ import annotations

from pathlib import Path

from otel_scorers.runs.otlp_files import InputProblem, Reading, runs_from_files
from tests.spans import conversations_file


def test_a_trace_written_root_first_is_built_whole_past_the_spans_read_between_looks(
    tmp_path: Path,
) -> None:
    # The file writer puts a trace's spans in the order they started, the run's span first,
    # and a look for complete traces comes every 1,024 spans: the run's tree is closed at
    # every span of it, long before its last tool call is read.
    calls = 1_500
    path = conversations_file(tmp_path / "traces.jsonl", {"c1": [("weather in Paris?", [False] * calls)]})
    problems: list[InputProblem] = []
    reading = Reading()
    runs = list(runs_from_files([path], problems, reading=reading))
    assert problems == []
    assert len(runs) == 1
    assert len(runs[0].tool_calls) == calls
    assert reading.late_spans == 0
