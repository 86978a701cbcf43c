"""A run whose trace holds no tool call data (no tool span, no model call, under a framework
whose tool calls pass by the tool spans instrumentations write) skips the tool checks, saying
why, instead of scoring the run as one that called nothing."""

from __future__ import annotations

import json

import pytest

from otel_scorers import bind, checks
from otel_scorers.model import Score
from otel_scorers.pipeline.scorer_call import evaluate

from .fixture_runs import TRACES, runs_of

#: LoongSuite's CrewAI instrumentation: CrewAI's native tool calls pass by its tool wrapper, and
#: it writes no model span (docs/frameworks.md).
UNTRACED = [
    ("loongsuite-crewai", path.name.removesuffix(".truth.json"))
    for path in sorted((TRACES / "loongsuite-crewai").glob("*.truth.json"))
    if path.name != "agent_kickoff.truth.json"  # no run read (pending in the fixture tests)
]
#: Instrumentations that write no model span but a tool span for every call: a run without one
#: called no tool.
TRACED = [
    ("otel-agno", "no_tool"),
    ("otel-llamaindex", "no_tool"),
    ("ag2-openinference", "no_tool"),
    ("llamaindex-openllmetry-alone", "no_tool"),
]
TOOL_CHECKS = [checks.called_tool("get_weather"), checks.used_no_tools(), checks.max_tool_calls(0)]


def _scores(corpus: str, scenario: str) -> list[Score]:
    runs = runs_of(corpus, scenario)
    assert runs
    scores = [evaluate(bind(check), run) for run in runs for check in TOOL_CHECKS]
    assert all(isinstance(score, Score) for score in scores)
    return [score for score in scores if isinstance(score, Score)]


@pytest.mark.parametrize("case", UNTRACED, ids="/".join)
def test_a_run_whose_trace_holds_no_tool_call_data_skips_the_tool_checks_saying_why(
    case: tuple[str, str],
) -> None:
    truth = json.loads((TRACES / case[0] / f"{case[1]}.truth.json").read_text())
    assert len(runs_of(*case)) == len(truth["runs"])
    for score in _scores(*case):
        assert score.value is None, (score.scorer, score.reason)
        assert score.skipped is not None and "tool calls" in score.skipped
        assert "does not record" in score.skipped  # content capture would not help


@pytest.mark.parametrize("case", TRACED, ids="/".join)
def test_a_run_without_a_tool_span_under_an_instrumentation_that_writes_them_called_none(
    case: tuple[str, str],
) -> None:
    truth = json.loads((TRACES / case[0] / f"{case[1]}.truth.json").read_text())
    assert all(not run["tool_calls"] for run in truth["runs"])
    assert [(score.scorer, score.value) for score in _scores(*case)] == [
        (check.name, expected)
        for _ in truth["runs"]
        for check, expected in zip(TOOL_CHECKS, (0.0, 1.0, 1.0), strict=True)
    ]
