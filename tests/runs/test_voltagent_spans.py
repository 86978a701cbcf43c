"""What VoltAgent's own observability (`descriptions/voltagent.yaml`) holds, read on traces captured
from VoltAgent 2.10's agents (tests/fixtures/traces/voltagent)."""

from __future__ import annotations

from otel_scorers.model import AgentRun

from .fixture_runs import attribute_values, runs_of


def calls(run: AgentRun) -> list[tuple[object, ...]]:
    return [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls]


def test_a_voltagent_agent_span_is_a_run_with_its_request_answer_and_tool_calls() -> None:
    (run,) = runs_of("voltagent", "two_tools")
    assert run.convention == "voltagent"
    assert run.agent_name == "weather-agent"
    assert run.input == "What is the weather in Paris, and what time is it there?"
    assert attribute_values("voltagent", "two_tools", "tool.execution:get_time", "output") == ["14:05"]
    assert calls(run) == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok"),
        ("get_time", {"city": "Paris"}, "14:05", "ok"),
    ]
    assert run.models == ("gpt-4o-mini",)


def test_a_voltagent_tool_that_threw_is_a_failed_call() -> None:
    (run,) = runs_of("voltagent", "failing_tool")
    assert [(call.name, call.state) for call in run.tool_calls] == [("get_weather", "error")]


def test_a_voltagent_sub_agent_is_a_run_of_its_own_named_after_it_with_the_task_it_was_given() -> None:
    # The sub-agent's span carries its supervisor's `entity.*` keys: its own name is `subagent.name`,
    # its request the UI message the supervisor's `delegate_task` gave it.
    assert attribute_values("voltagent", "sub_agent", "subagent:weather-agent", "entity.name") == [
        "travel-agent"
    ]
    supervisor, sub_agent = runs_of("voltagent", "sub_agent")
    assert (supervisor.agent_name, sub_agent.agent_name) == ("travel-agent", "weather-agent")
    assert sub_agent.input == "What is the weather in Paris?"
    assert [call.name for call in supervisor.tool_calls] == ["delegate_task"]
    assert [call.name for call in sub_agent.tool_calls] == ["get_weather"]
