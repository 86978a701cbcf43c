"""Qwen-Agent's own texts and LoongSuite's record of its messages, read on traces captured from
Qwen-Agent `Assistant`s under loongsuite-instrumentation-qwen-agent 0.9
(tests/fixtures/traces/loongsuite-qwen-agent)."""

from __future__ import annotations

from .fixture_runs import attribute_values, runs_of


def test_a_tool_span_whose_result_is_qwen_agent_s_failure_text_is_a_failed_call() -> None:
    (result,) = attribute_values(
        "loongsuite-qwen-agent", "failing_tool", "execute_tool get_weather", "gen_ai.tool.call.result"
    )
    assert result.startswith("An error occurred when calling tool `get_weather`:\nRuntimeError:")
    (run,) = runs_of("loongsuite-qwen-agent", "failing_tool")
    (call,) = run.tool_calls
    assert (call.state, call.result, call.error) == (
        "error",
        None,
        "RuntimeError: weather service unavailable",
    )


def test_a_call_asked_for_without_an_id_is_answered_by_the_response_in_its_place() -> None:
    # The sub-agent's tool has no span; the model asked for it without an id and was sent its
    # result in the message after the request.
    _, weather = runs_of("loongsuite-qwen-agent", "nested")
    assert [(call.name, call.arguments, call.result, call.state) for call in weather.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok")
    ]
