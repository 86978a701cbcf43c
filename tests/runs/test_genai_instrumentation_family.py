"""Traces of OpenTelemetry's own instrumentations of agent frameworks
(`opentelemetry-instrumentation-genai-*`, GenAI semantic conventions through
`opentelemetry-util-genai`), captured from the real packages, read by the rules every
instrumentation shares: what each framework does is known whichever instrumentation wrote it."""

from __future__ import annotations

from .fixture_runs import runs_of


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
