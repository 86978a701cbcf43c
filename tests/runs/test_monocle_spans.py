"""What Monocle's own tracing (`descriptions/monocle.yaml`) holds, read on traces captured from
LangChain `create_agent` graphs under monocle-apptrace 0.8 (tests/fixtures/traces/monocle-langgraph)."""

from __future__ import annotations

from otel_scorers.model import AgentRun

from .fixture_runs import runs_of


def calls(run: AgentRun) -> list[tuple[object, ...]]:
    return [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls]


def test_a_monocle_agent_invocation_is_a_run_with_its_request_answer_and_tool_calls() -> None:
    (run,) = runs_of("monocle-langgraph", "two_tools")
    assert run.convention == "monocle"
    assert run.agent_name == "weather_agent"
    assert run.input == "What is the weather in Paris, and what time is it there?"
    # The arguments are a Python repr in the span's `data.input` event.
    assert [call[:2] for call in calls(run)] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"city": "Paris", "timezone": "Europe/Paris"}),
    ]
    assert run.models == ("gpt-4o-mini",)


def test_a_monocle_run_s_request_is_the_last_of_the_user_messages_it_was_given() -> None:
    first, second = runs_of("monocle-langgraph", "multi_turn")
    assert (first.input, second.input) == ("What is the weather in Paris?", "And what time is it there?")


def test_a_monocle_tool_that_raised_is_a_failed_call() -> None:
    (run,) = runs_of("monocle-langgraph", "failing_tool")
    assert [(call.name, call.state) for call in run.tool_calls] == [("get_weather", "error")]


def test_a_graph_a_monocle_tool_runs_is_a_run_of_its_own() -> None:
    # The graph the tool runs is compiled without a name: LangGraph's own, as the truth says.
    travel, weather = runs_of("monocle-langgraph", "agent_in_tool")
    assert (travel.agent_name, weather.agent_name) == ("travel_agent", "LangGraph")
    assert [call.name for call in travel.tool_calls] == ["ask_weather_agent"]
    assert [call.name for call in weather.tool_calls] == ["get_weather"]
