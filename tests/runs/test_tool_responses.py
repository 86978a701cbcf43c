"""A tool's result written as a response of content items, whichever tool or framework wrote it
(MCP's `CallToolResult`, AgentScope's `ToolResponse`), is read as what the tool returned; read on
traces captured from AgentScope 2's own tracing (tests/fixtures/traces/agentscope)."""

from __future__ import annotations

import json

from otel_scorers.model import AgentRun

from .fixture_runs import attribute_values, runs_of

CORPUS = "agentscope"


def calls(run: AgentRun) -> list[tuple[object, ...]]:
    return [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls]


def test_a_tool_response_of_text_content_is_read_as_its_text() -> None:
    (written,) = attribute_values(CORPUS, "two_tools", "execute_tool get_time", "gen_ai.tool.call.result")
    assert json.loads(written)["content"][0]["text"] == "14:05"
    (run,) = runs_of(CORPUS, "two_tools")
    assert calls(run) == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok"),
        ("get_time", {"city": "Paris"}, "14:05", "ok"),
    ]


def test_a_tool_response_whose_text_is_json_is_read_as_the_object_the_tool_returned() -> None:
    (run,) = runs_of(CORPUS, "dict_result")
    assert calls(run) == [
        (
            "get_weather_report",
            {"city": "Paris"},
            {"city": "Paris", "temp_c": 21, "sunny": True, "wind": None},
            "ok",
        )
    ]


def test_a_tool_response_in_the_error_state_is_a_failed_call_on_a_span_left_ok() -> None:
    (written,) = attribute_values(
        CORPUS, "failing_tool", "execute_tool get_weather", "gen_ai.tool.call.result"
    )
    assert json.loads(written)["state"] == "error"
    (run,) = runs_of(CORPUS, "failing_tool")
    assert calls(run) == [("get_weather", {"city": "Paris"}, None, "error")]
    assert run.tool_calls[0].error == "weather service unavailable"
