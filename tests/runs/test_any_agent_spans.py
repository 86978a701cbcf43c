"""What any-agent's own spans hold (`descriptions/any_agent.yaml`), read on traces captured from
any-agent 1.18's `TinyAgent` over a scripted model (tests/fixtures/traces/any-agent)."""

from __future__ import annotations

from otel_scorers.model import AgentRun
from otel_scorers.runs.run_text import FROM_MODEL_CALLS

from .fixture_runs import attribute_values, runs_of

CORPUS = "any-agent"


def calls(run: AgentRun) -> list[tuple[object, ...]]:
    return [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls]


def test_an_any_agent_run_takes_its_request_and_answer_from_its_model_calls() -> None:
    (run,) = runs_of(CORPUS, "tool_then_answer")
    assert run.convention == "any_agent"
    assert run.agent_name == "weather_agent"
    # The run span holds neither: the first `call_llm` span holds the messages sent, the last the
    # answer, under any-agent's own `gen_ai.output`.
    assert attribute_values(CORPUS, "tool_then_answer", "call_llm gpt-4o-mini", "gen_ai.output")[-1] == (
        "It is sunny and 21°C in Paris."
    )
    assert run.input == "What is the weather in Paris?"
    assert run.output == "It is sunny and 21°C in Paris."
    assert run.text_sources == {"input": FROM_MODEL_CALLS, "output": FROM_MODEL_CALLS}
    assert run.models == ("gpt-4o-mini",)
    assert not run.missing


def test_an_any_agent_tool_call_is_read_from_its_arguments_and_output_keys() -> None:
    (run,) = runs_of(CORPUS, "two_tools")
    # `gen_ai.tool.args` and `gen_ai.output`, not the GenAI conventions' `gen_ai.tool.call.*`.
    assert attribute_values(CORPUS, "two_tools", "execute_tool get_time", "gen_ai.tool.args") == [
        '{"city": "Paris"}'
    ]
    assert calls(run) == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok"),
        ("get_time", {"city": "Paris"}, "14:05", "ok"),
    ]


def test_an_any_agent_tool_that_raised_is_a_failed_call() -> None:
    (run,) = runs_of(CORPUS, "failing_tool")
    # any-agent gives the model the error as text and marks the tool span ERROR.
    assert calls(run) == [("get_weather", {"city": "Paris"}, None, "error")]
    assert run.output is not None and run.output.startswith("Sorry")


def test_a_turn_given_the_conversation_so_far_is_read_from_its_last_user_message() -> None:
    first, second = runs_of(CORPUS, "multi_turn")
    assert (first.input, second.input) == ("What is the weather in Paris?", "And what time is it there?")
    assert second.output == "It is 14:05 in Paris."
    assert calls(second) == [("get_time", {"city": "Paris"}, "14:05", "ok")]


def test_an_any_agent_run_a_tool_awaits_is_a_run_of_its_own_inside_the_call() -> None:
    manager, inner = runs_of(CORPUS, "agent_as_tool")
    assert (manager.agent_name, inner.agent_name) == ("manager", "weather_agent")
    assert calls(manager) == [
        (
            "ask_weather_agent",
            {"question": "Find the current weather in Paris."},
            "Sunny and 21°C in Paris.",
            "ok",
        )
    ]
    assert (inner.input, inner.output) == ("Find the current weather in Paris.", "Sunny and 21°C in Paris.")
    assert calls(inner) == [("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok")]
