"""Runs written in a tracing vocabulary of a framework's own, that no reader or description knows,
are rebuilt as the script that wrote them says (`own_vocabulary`), read by the vocabulary the
trace itself shows (`conventions/inferred.py`), by the fixture tests' own comparison."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_scorers.runs.otlp_files import InputProblem, runs_from_files
from tests.conventions.genai_semconv_scenarios import SCENARIOS, Scenario
from tests.conventions.own_vocabulary import VOCABULARIES, Vocabulary, scenario_truth, write_scenario
from tests.conventions.test_fixture_runs import assert_runs_match

#: The scenarios of one agent and its tools, nested agents and conversations.
READ = (
    "tool_then_answer",
    "two_tools",
    "failing_tool",
    "no_tool",
    "multi_turn",
    "nested",
    "dict_result",
    "same_tool_twice",
)


@pytest.mark.parametrize("words", VOCABULARIES, ids=lambda words: words.name)
@pytest.mark.parametrize(
    "scenario", [s for s in SCENARIOS if s.name in READ], ids=lambda scenario: scenario.name
)
def test_a_vocabulary_no_reader_knows_is_read_as_written(
    tmp_path: Path, words: Vocabulary, scenario: Scenario
) -> None:
    problems: list[InputProblem] = []
    runs = sorted(
        runs_from_files([write_scenario(tmp_path, words, scenario)], problems), key=lambda run: run.start_ns
    )
    assert not problems, problems
    assert {run.convention for run in runs} == {f"inferred:{words.kind}"}
    truth = scenario_truth(words, scenario)
    assert_runs_match(truth, truth["framework"], runs)
