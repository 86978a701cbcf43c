"""Traces of OpenTelemetry's own instrumentations of agent frameworks
(`opentelemetry-instrumentation-genai-*`, GenAI semantic conventions through
`opentelemetry-util-genai`) and of LoongSuite's, captured from the real packages, read by the
rules every instrumentation shares: what each framework does is known whichever instrumentation
wrote it."""

from __future__ import annotations

import json
from pathlib import Path

from otel_scorers.conventions.frameworks import framework_name

from .fixture_runs import TRACES, runs_in, runs_of
from .test_framework_facts_any_instrumentation import renamed_scope, rewritten


def scopes_of(corpus: str, scenario: str, span_name: str) -> list[str]:
    """The instrumentation scope of each span of that name in the captured trace."""
    trace = json.loads((TRACES / corpus / f"{scenario}.json").read_text())
    return [
        scope["scope"]["name"]
        for resource in trace["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
        if span["name"] == span_name
    ]


def test_a_llamaindex_handoff_that_the_reader_does_not_know_joins_the_agents_runs_into_one() -> None:
    # The workflow's `handoff` tool names the next agent `to_agent`; each agent has its own
    # `invoke_agent` span inside the workflow's: as the user sees it, one run.
    [run] = runs_of("otel-llamaindex", "handoff")
    assert run.agent_name == "weather_agent"
    assert [(handoff.from_agent, handoff.to_agent) for handoff in run.handoffs] == [
        ("weather_agent", "time_agent")
    ]
    assert run.final_agent == "time_agent"
    assert run.input == "What is the weather in Paris, and what time is it there?"
    assert run.output == "It is sunny and 21°C in Paris, and the local time is 14:05."
    assert [call.name for call in run.tool_calls] == ["get_weather", "get_time"]


def test_opentelemetrys_own_instrumentation_scope_names_the_framework_after_genai() -> None:
    [scope] = scopes_of("otel-smolagents", "tool_then_answer", "invoke_agent weather_agent")
    assert scope == "opentelemetry.instrumentation.genai.smolagents"
    assert framework_name(scope) == "smolagents"


def test_the_answering_tool_the_model_asked_for_is_not_a_call_though_no_span_answered_it() -> None:
    # No tool spans: smolagents' `final_answer`, asked for last with the answer, is how the agent
    # answered, not a tool it used.
    [run] = runs_of("otel-smolagents", "no_tool")
    assert run.output == "Bonjour !"
    assert run.tool_calls == ()


def test_smolagents_observations_in_the_next_request_are_the_results_of_calls_no_span_recorded() -> None:
    [run] = runs_of("otel-smolagents", "two_tools")
    assert [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok"),
        ("get_time", {"city": "Paris"}, "14:05", "ok"),
    ]


def test_a_failure_smolagents_told_the_model_in_the_task_text_is_the_calls_error() -> None:
    [run] = runs_of("otel-smolagents", "failing_tool")
    [call] = run.tool_calls
    assert (call.name, call.state, call.result) == ("get_weather", "error", None)
    assert call.error == "RuntimeError: weather service unavailable"


def test_a_managed_agents_report_in_the_next_request_is_the_managers_call_result() -> None:
    manager, weather = runs_of("otel-smolagents", "nested")
    [call] = manager.tool_calls
    assert (call.name, call.arguments) == ("weather_agent", {"task": "Find the current weather in Paris."})
    assert (
        call.result
        == "Here is the final answer from your managed agent 'weather_agent':\nSunny and 21°C in Paris."
    )
    assert [(inner.name, inner.result) for inner in weather.tool_calls] == [("get_weather", "Sunny, 21°C")]


def test_a_query_engine_tools_response_object_is_read_as_the_text_the_model_got() -> None:
    # The tool span records LlamaIndex's `Response` as JSON, its retrieved nodes beside the text.
    [run] = runs_of("otel-llamaindex", "query_engine_tool")
    [call] = run.tool_calls
    assert (call.name, call.arguments, call.result) == (
        "paris_guide",
        {"input": "Louvre opening hours"},
        "The Louvre opens at 9:00.",
    )


def test_a_run_joined_from_its_model_calls_is_named_by_the_graph_it_ran_in() -> None:
    # LoongSuite writes no agent span for a hand-built StateGraph: its calls sit in the graph's
    # `chain weather_agent` span (the graph's messages state its input), around the nodes' spans.
    for scenario in ("tool_then_answer", "no_tool"):
        [run] = runs_of("loongsuite-langgraph", scenario)
        assert run.agent_name == "weather_agent"
        assert "agent_name" not in run.missing


def test_the_failure_text_qwen_agent_returns_for_a_tool_that_raised_is_the_calls_error() -> None:
    # Qwen-Agent catches the exception and returns `An error occurred when calling tool ...` as
    # the tool's result: OpenTelemetry's instrumentation records it so, its span left unset.
    [scope] = scopes_of("otel-qwen-agent", "failing_tool", "execute_tool get_weather")
    assert framework_name(scope) == "qwen_agent"
    [run] = runs_of("otel-qwen-agent", "failing_tool")
    [call] = run.tool_calls
    assert (call.name, call.state, call.result) == ("get_weather", "error", None)
    assert call.error == "RuntimeError: weather service unavailable"


def test_qwen_agents_failure_text_says_the_call_failed_under_a_scope_naming_no_framework(
    tmp_path: Path,
) -> None:
    # Each listed framework's failure text is specific enough to be its own under any scope.
    [run] = runs_in(rewritten("otel-qwen-agent", "failing_tool", renamed_scope("acme.tracer"), tmp_path))
    [call] = run.tool_calls
    assert (call.name, call.state, call.error) == (
        "get_weather",
        "error",
        "RuntimeError: weather service unavailable",
    )
