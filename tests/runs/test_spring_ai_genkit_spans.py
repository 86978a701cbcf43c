"""What Spring AI's observations (`descriptions/spring_ai.yaml`) and Genkit's own tracing
(`descriptions/genkit.yaml`) hold, read on traces captured from Spring AI 1.1's `ChatClient`
(tests/fixtures/traces/spring-ai) and Genkit 1.42's flows (tests/fixtures/traces/genkit), and Genkit Go 1.4's
(tests/fixtures/traces/genkit-go)."""

from __future__ import annotations

from otel_scorers.model import AgentRun

from .fixture_runs import attribute_values, runs_of


def calls(run: AgentRun) -> list[tuple[object, ...]]:
    return [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls]


def test_a_spring_ai_chat_client_call_is_a_run_with_its_tool_calls() -> None:
    (run,) = runs_of("spring-ai", "two_tools")
    # The ChatClient call (`spring.ai.kind = chat_client`, under Spring's own scope) is the run;
    # its `@Tool` methods are `tool_call {name}` observations with their arguments and result.
    assert run.convention == "spring_ai"
    assert attribute_values("spring-ai", "two_tools", "tool_call get_time", "spring.ai.tool.call.result") == [
        '"14:05"'
    ]
    assert calls(run) == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok"),
        ("get_time", {"city": "Paris"}, "14:05", "ok"),
    ]
    assert run.models == ("gpt-4o-mini",)
    assert run.usage.input_tokens == 120


def test_a_spring_ai_run_lists_the_text_its_observations_do_not_hold_as_missing() -> None:
    # Spring AI names no ChatClient and writes neither the request nor the answer on a span.
    runs = runs_of("spring-ai", "multi_turn")
    assert len(runs) == 2
    for run in runs:
        assert run.agent_name is None and run.input is None and run.output is None
        assert {"agent_name", "input", "output"} <= run.missing


def test_a_chat_client_a_tool_calls_is_a_run_of_its_own_inside_the_call() -> None:
    outer, inner = runs_of("spring-ai", "nested")
    assert calls(outer) == [
        (
            "ask_weather_agent",
            {"question": "What is the weather in Paris?"},
            "It is sunny and 21°C in Paris.",
            "ok",
        )
    ]
    assert calls(inner) == [("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok")]


def test_a_genkit_flow_is_a_run_named_after_it_with_its_input_and_output() -> None:
    (run,) = runs_of("genkit", "tool_then_answer")
    # The flow's span holds its input and output as JSON strings (with their quotes); its
    # `generate` steps are not runs.
    assert attribute_values("genkit", "tool_then_answer", "weather_agent", "genkit:input") == [
        '"What is the weather in Paris?"'
    ]
    assert run.convention == "genkit"
    assert run.agent_name == "weather_agent"
    assert run.input == "What is the weather in Paris?"
    assert run.output == "It is sunny and 21°C in Paris."
    assert calls(run) == [("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok")]
    assert run.usage.input_tokens == 40
    assert not run.missing


def test_a_genkit_tool_that_raised_is_a_failed_call_and_its_flow_has_no_answer() -> None:
    (run,) = runs_of("genkit", "failing_tool")
    assert calls(run) == [("broken_weather", {"city": "Paris"}, None, "error")]
    assert run.output is None and "output" in run.missing


def test_genkit_flows_a_tool_runs_are_two_runs() -> None:
    outer, inner = runs_of("genkit", "nested")
    assert (outer.agent_name, inner.agent_name) == ("trip_planner", "weather_agent")
    assert inner.input == "What is the weather in Paris?"
    assert calls(outer)[0][0] == "ask_weather_agent"


def test_a_genkit_go_tool_v2_action_is_a_tool_call_with_its_result_unwrapped() -> None:
    # Genkit Go 1.4 writes a tool as a `tool.v2` action, its result wrapped as `{"output": ...}`.
    assert attribute_values("genkit-go", "dict_result", "get_weather_report", "genkit:metadata:subtype") == [
        "tool.v2"
    ]
    (run,) = runs_of("genkit-go", "dict_result")
    assert calls(run) == [
        (
            "get_weather_report",
            {"city": "Paris"},
            {"city": "Paris", "temp_c": 21, "sunny": True, "wind": None},
            "ok",
        )
    ]
    (run,) = runs_of("genkit-go", "failing_tool")
    assert [(call.name, call.state) for call in run.tool_calls] == [("broken_weather", "error")]
