"""Older releases of two OpenAI Agents SDK instrumentations, read as the current ones are: OpenAI
Agents SDK 0.3 under OpenLLMetry's instrumentation 0.52 (tests/fixtures/traces/
openllmetry052-openai-agents) and under OpenInference's 1.2 (openinference12-openai-agents)."""

from __future__ import annotations

from otel_scorers.model import AgentRun

from .fixture_runs import attribute_values, runs_of


def calls(run: AgentRun) -> list[tuple[object, ...]]:
    return [(call.name, call.call_id, call.arguments, call.result, call.state) for call in run.tool_calls]


def test_tool_spans_without_their_content_are_completed_from_the_requests_after_them() -> None:
    (run,) = runs_of("openllmetry052-openai-agents", "two_tools")
    # This release writes a tool span's name only, and a chat span's request, never its reply:
    # the next request's history holds the call the model asked for and what it was sent back.
    assert attribute_values(
        "openllmetry052-openai-agents", "two_tools", "get_time.tool", "gen_ai.tool.name"
    ) == ["get_time"]
    assert calls(run) == [
        ("get_weather", "call_0004", {"city": "Paris"}, "Sunny, 21°C", "ok"),
        ("get_time", "call_0006", {"city": "Paris"}, "14:05", "ok"),
    ]
    assert not {"tool_arguments", "tool_results"} & run.missing
    assert run.output is None and "output" in run.unrecorded


def test_a_failed_tool_whose_span_holds_nothing_stays_failed_without_a_result() -> None:
    (run,) = runs_of("openllmetry052-openai-agents", "failing_tool")
    assert calls(run) == [("get_weather", "call_0012", {"city": "Paris"}, None, "error")]


def test_an_openinference_agent_span_of_release_1_is_a_run_named_by_its_graph_node() -> None:
    # Release 1.2 writes no `agent.name`: the agent's span names it in `graph.node.id`; the root
    # `Agent workflow` AGENT span names none and is not a run.
    assert attribute_values(
        "openinference12-openai-agents", "tool_then_answer", "weather_agent", "graph.node.id"
    ) == ["weather_agent"]
    (run,) = runs_of("openinference12-openai-agents", "tool_then_answer")
    assert run.agent_name == "weather_agent"
    assert (run.input, run.output) == ("What is the weather in Paris?", "It is sunny and 21°C in Paris.")
    assert calls(run) == [("get_weather", "call_0001", {"city": "Paris"}, "Sunny, 21°C", "ok")]


def test_a_handoff_of_release_1_joins_one_run_of_the_agent_it_started_with() -> None:
    (run,) = runs_of("openinference12-openai-agents", "handoff_after_tool")
    assert run.agent_name == "triage_agent"
    assert [(handoff.from_agent, handoff.to_agent) for handoff in run.handoffs] == [
        ("triage_agent", "weather_agent")
    ]
    assert [call[0] for call in calls(run)] == ["get_time", "get_weather"]
