"""Runs written in every form the GenAI semantic conventions have taken, under a scope no reader
knows, are rebuilt as the script that wrote them says (`genai_semconv_matrix`), by the fixture
tests' own comparison."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from otel_scorers import ScoringSpanProcessor
from otel_scorers.model import AgentRun
from otel_scorers.runs.otlp_files import InputProblem, runs_from_files
from tests.conftest import RunRecorder, Telemetry
from tests.conventions.genai_semconv_matrix import (
    FORMS_BY_NAME,
    SCENARIOS,
    Form,
    Scenario,
    cases,
    form_provider,
    scenario_truth,
    write_scenario,
    write_spans,
)
from tests.conventions.test_fixture_runs import assert_runs_match

#: (form, scenario) -> why the trace is not read as written yet.
PENDING: dict[tuple[str, str], str] = {}
#: (form, scenario) -> why the trace does not carry the run's tool calls: the run must say they
#: are missing (so tool checks skip it) and be right in everything else.
CALLS_NOT_CARRIED: dict[tuple[str, str], str] = {
    ("no-tool-spans", "no_content"): "no tool spans, and model calls without their content",
}


def rebuilt(directory: Path, form: Form, scenario: Scenario) -> list[AgentRun]:
    problems: list[InputProblem] = []
    path = write_scenario(directory, form, scenario)
    runs = sorted(runs_from_files([path], problems), key=lambda run: run.start_ns)
    assert not problems, problems
    return runs


def assert_read_as_written(form: Form, scenario: Scenario, runs: list[AgentRun]) -> None:
    truth = scenario_truth(form, scenario)
    if (form.name, scenario.name) in CALLS_NOT_CARRIED:
        assert all({"tool_calls", "tool_errors"} <= run.missing for run in runs)
        truth["runs"] = [{**expected, "tool_calls": []} for expected in truth["runs"]]
    assert_runs_match(truth, truth["framework"], runs)


def matrix() -> list[Any]:
    params = []
    for form, scenario in cases():
        reason = PENDING.get((form.name, scenario.name))
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(form, scenario, id=f"{form.name}/{scenario.name}", marks=marks))
    return params


@pytest.mark.parametrize(("form", "scenario"), matrix())
def test_every_form_of_the_conventions_is_read_as_its_script_wrote_it(
    tmp_path: Path, form: Form, scenario: Scenario
) -> None:
    assert_read_as_written(form, scenario, rebuilt(tmp_path, form, scenario))


@pytest.mark.parametrize(("form", "scenario"), matrix())
def test_every_form_of_the_conventions_is_read_in_process_as_its_script_wrote_it(
    telemetry: Telemetry, form: Form, scenario: Scenario
) -> None:
    # Written live through a TracerProvider with the processor attached: the processor decides
    # from spans as they start which traces to keep.
    recorder = RunRecorder()
    processor = ScoringSpanProcessor([recorder], **telemetry.providers())
    provider = form_provider(form) if form.attribute_length else telemetry.tracer_provider
    provider.add_span_processor(processor)
    write_spans(provider, form, scenario)
    assert processor.force_flush(10_000)
    assert_read_as_written(form, scenario, sorted(recorder.runs, key=lambda run: run.start_ns))


SCENARIO = {scenario.name: scenario for scenario in SCENARIOS}


def test_a_model_span_before_v1_27_names_no_operation_and_is_read_by_its_required_keys(
    tmp_path: Path,
) -> None:
    # v1.26 model spans carry `gen_ai.system` and `gen_ai.request.model`, their content in
    # `gen_ai.content.prompt` / `gen_ai.content.completion` events, and no operation name.
    (run,) = rebuilt(tmp_path, FORMS_BY_NAME["prompt-events"], SCENARIO["tool_then_answer"])
    assert (run.input, run.output) == ("What is the weather in Paris?", "It is sunny and 21°C in Paris.")
    assert [(call.name, call.arguments, call.result) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C")
    ]


def test_a_result_the_model_was_sent_as_json_text_is_the_value_the_tool_returned(tmp_path: Path) -> None:
    # The tool spans of v1.26-1.36 (and of v1.37 without opt-in content) hold no result: the
    # chat-completions `tool` message the next model call was sent holds it, as JSON text.
    for form in ("model-content-only", "prompt-events", "indexed"):
        (run,) = rebuilt(tmp_path / form, FORMS_BY_NAME[form], SCENARIO["dict_result"])
        assert [call.result for call in run.tool_calls] == [
            {"city": "Paris", "temp_c": 21, "sunny": True, "wind": None}
        ], form


def test_an_agent_asked_its_own_request_that_asks_another_agent_is_a_run_not_its_wrapper(
    tmp_path: Path,
) -> None:
    # trip_planner's own model calls are not traced: its span does nothing but hold its request,
    # its answer and weather_agent's run, which was asked something else.
    outer, inner = rebuilt(tmp_path, FORMS_BY_NAME["agent-and-tools-only"], SCENARIO["delegated"])
    assert (outer.agent_name, outer.input, outer.output, len(outer.tool_calls)) == (
        "trip_planner",
        "Should I pack an umbrella for Paris today?",
        "No umbrella needed: it is sunny and 21°C in Paris.",
        0,
    )
    assert (inner.agent_name, inner.input) == ("weather_agent", "What is the weather in Paris today?")


def test_a_run_span_without_a_conversation_id_takes_the_one_its_model_calls_carry(tmp_path: Path) -> None:
    for scenario in ("multi_turn", "two_runs_one_trace"):
        runs = rebuilt(tmp_path / scenario, FORMS_BY_NAME["model-content-only"], SCENARIO[scenario])
        assert [run.conversation_id for run in runs] == [
            "conv-7" if scenario == "multi_turn" else "conv-9"
        ] * 2


def test_a_run_whose_model_asked_for_tools_no_span_records_lists_its_tool_calls_as_missing(
    tmp_path: Path,
) -> None:
    # Tools untraced and content off: only the model spans' finish reasons say tools were asked
    # for. A run that asked for none did call none.
    form = FORMS_BY_NAME["no-tool-spans"]
    (run,) = rebuilt(tmp_path / "calls", form, SCENARIO["no_content"])
    assert not run.tool_calls and {"tool_calls", "tool_errors"} <= run.missing
    quiet = Scenario("no_tool_no_content", SCENARIO["no_tool"].traces, capture=False)
    (run,) = rebuilt(tmp_path / "none", form, quiet)
    assert not run.tool_calls and "tool_calls" not in run.missing


def test_a_request_cut_off_by_the_attribute_length_limit_is_missing_not_guessed(tmp_path: Path) -> None:
    # At 200 characters the second turn's messages lose their end, where its request is: the
    # first turn's request, still in what is left, is not the run's.
    form = replace(FORMS_BY_NAME["truncated"], attribute_length=200)
    first, second = rebuilt(tmp_path, form, SCENARIO["multi_turn"])
    assert first.input == "What is the weather in Paris?"
    assert second.input is None and "input" in second.missing
    assert second.output == "It is 14:05 in Paris."
