"""What a framework does the same under every instrumentation is read alike whichever
instrumentation wrote the span (`conventions/frameworks.py`), and a tool's result as the tool
returned it, on traces captured from real packages (tests/fixtures/traces)."""

from __future__ import annotations

from pathlib import Path

from otel_scorers.conventions.frameworks import FRAMEWORKS, framework_name
from tests.runs.fixture_runs import runs_of

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


def test_every_instrumentation_of_a_framework_names_the_same_framework() -> None:
    assert {
        framework_name(scope)
        for scope in (
            "openinference.instrumentation.crewai",
            "openinference.instrumentation.crewai._event_listener",
            "opentelemetry.instrumentation.crewai.instrumentation",
            "openlit.instrumentation.crewai",
        )
    } == {"crewai"}
    assert framework_name("openlit.instrumentation.google_adk") == "google_adk"
    assert framework_name("openinference.instrumentation.google_adk") == "google_adk"


def test_the_request_crewai_wraps_in_its_prompt_is_the_users_under_openlit_too() -> None:
    # OpenLIT's span of a kicked-off agent holds no request: its model call's prompt does.
    (run,) = runs_of("openlit-crewai", "agent_kickoff")
    assert run.input == "What is the weather in Paris?"


def test_the_failure_crewai_sends_the_model_is_a_failed_call_under_openlit_too() -> None:
    # OpenLIT writes no CrewAI tool spans: the call is the model's request and what it was sent.
    (run,) = runs_of("openlit-crewai", "failing_tool")
    assert [(call.name, call.state, call.result, call.error) for call in run.tool_calls] == [
        ("get_weather", "error", None, "weather service unavailable")
    ]


def test_the_failure_ag2_sends_the_model_is_a_failed_call_under_openlit_too() -> None:
    # OpenLIT writes no AG2 tool spans: `execute_function` sent the model "Error: {exception}".
    (run,) = runs_of("openlit-ag2", "failing_tool")
    assert [(call.name, call.state, call.result, call.error) for call in run.tool_calls] == [
        ("get_weather", "error", None, "weather service unavailable")
    ]


def test_without_content_a_run_whose_instrumentation_writes_no_tool_spans_misses_its_calls() -> None:
    (run,) = runs_of("openlit-crewai", "no_content")
    assert run.tool_calls == ()
    assert {"tool_calls", "tool_errors"} <= run.missing


def test_a_tool_result_recorded_as_its_function_response_is_what_the_tool_returned() -> None:
    # OpenInference's ADK tool span: {"id": ..., "name": "get_weather", "response": {"result": ...}}.
    (run,) = runs_of("openinference-google-adk", "two_tools")
    assert [(call.name, call.result) for call in run.tool_calls] == [
        ("get_weather", "Sunny, 21°C"),
        ("get_time", "14:05"),
    ]


def test_a_sub_agents_function_response_is_its_answer() -> None:
    orchestrator, specialist = runs_of("openinference-google-adk", "nested")
    assert [(call.name, call.result) for call in orchestrator.tool_calls] == [
        ("weather_specialist", "Paris: sunny, 21°C.")
    ]
    assert specialist.output == "Paris: sunny, 21°C."


def test_each_frameworks_failure_text_begins_as_its_listed_prefix_says() -> None:
    # A tool's recorded result is asked for a failure text only when it begins with one.
    for name, framework in FRAMEWORKS.items():
        if framework.tool_error is not None:
            assert framework.tool_error_prefix is not None, name
            assert (
                framework.tool_error(f"{framework.tool_error_prefix}x`:\nRuntimeError: down") is not None
            ), name
            assert framework.tool_error("Sunny, 21°C") is None, name
