"""Runs written in a tracing vocabulary of a framework's own, that no reader or description knows,
are rebuilt as the script that wrote them says (`own_vocabulary`), read by the vocabulary the
trace itself shows (`conventions/inferred.py`), by the fixture tests' own comparison."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_scorers.runs.otlp_files import InputProblem, runs_from_files
from tests.conventions import genai_semconv_matrix
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


def test_a_vocabulary_is_read_after_genai_spans_of_the_same_tracer_and_names(tmp_path: Path) -> None:
    # The GenAI conventions' model span without content (`chat {model}`, under `acme.agents`)
    # carries no kind key; a model span of an invented vocabulary under the same tracer and name,
    # with as many keys, does: which keys a span may say its kind by is remembered by its keys.
    no_content = next(scenario for scenario in SCENARIOS if scenario.name == "no_content")
    no_tool = next(scenario for scenario in SCENARIOS if scenario.name == "no_tool")
    form = genai_semconv_matrix.FORMS_BY_NAME["current"]
    assert list(
        runs_from_files([genai_semconv_matrix.write_scenario(tmp_path / "genai", form, no_content)], [])
    )
    words = VOCABULARIES[0]
    runs = runs_from_files([write_scenario(tmp_path, words, no_tool)], [])
    assert {run.convention for run in runs} == {f"inferred:{words.kind}"}
