"""BeeAI for TypeScript under OpenInference writes its emitter's events as spans, and no span for a
component: the events are read as BeeAI's are in Python, the outcome event of a tool or a model
call as that call. On traces captured from real packages (tests/fixtures/traces)."""

from __future__ import annotations

from tests.runs.fixture_runs import runs_of

ANSWER = "It is sunny and 21°C in Paris."


def test_an_agents_event_spans_are_no_runs_of_their_own() -> None:
    runs = runs_of("openinference-beeaijs", "two_runs")
    assert [run.input for run in runs] == ["What is the weather in Paris?", "What time is it in Paris?"]


def test_a_tools_outcome_event_is_the_call_and_the_loop_tool_is_left_out() -> None:
    (run,) = runs_of("openinference-beeaijs", "tool_then_answer")
    assert [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls] == [
        ("getWeather", {"city": "Paris"}, "Sunny, 21°C", "ok")
    ]
    assert run.output == ANSWER


def test_a_tools_error_event_is_a_failed_call() -> None:
    (run,) = runs_of("openinference-beeaijs", "failing_tool")
    assert [(call.name, call.state) for call in run.tool_calls] == [("getWeather", "error")]
