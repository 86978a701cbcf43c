"""Agent spans that only wrap an agent's run, however many, are not runs: a runner's span around
an instrumentation's span of the agent around the framework's own (OpenLIT over Google ADK), on
traces captured from real packages (tests/fixtures/traces)."""

from __future__ import annotations

from pathlib import Path

from tests.runs.fixture_runs import runs_of

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
ANSWER = "It is sunny and 21°C in Paris."


def test_a_runners_agent_span_around_the_agents_spans_is_not_a_run() -> None:
    # invoke_agent fixtures (OpenLIT, the runner) > invoke_workflow (ADK) > invoke_agent
    # weather_agent (OpenLIT) > invoke_agent weather_agent (ADK), which holds the calls.
    (run,) = runs_of("openlit-google-adk", "tool_then_answer")
    assert (run.agent_name, run.output, [call.name for call in run.tool_calls]) == (
        "weather_agent",
        ANSWER,
        ["get_weather"],
    )
    # The answer is on OpenLIT's span, which only wraps ADK's: it lends it to the run.
    assert run.text_sources == {"output": "from the span around the run"}


def test_each_invocation_of_an_agent_is_one_run_under_two_instrumentations() -> None:
    runs = runs_of("openlit-google-adk", "two_runs")
    assert [(run.agent_name, run.output) for run in runs] == [
        ("weather_agent", ANSWER),
        ("weather_agent", "Bonjour !"),
    ]


def test_a_sub_agent_a_tool_runs_is_one_run_under_its_wrappers() -> None:
    orchestrator, specialist = runs_of("openlit-google-adk", "nested")
    assert [call.name for call in orchestrator.tool_calls] == ["weather_specialist"]
    assert (specialist.agent_name, specialist.output) == ("weather_specialist", "Paris: sunny, 21°C.")


def test_a_transfer_that_does_not_say_to_whom_hands_the_run_to_the_agent_that_runs_next() -> None:
    # Without ADK's content capture its transfer_to_agent span has no arguments.
    (run,) = runs_of("openlit-google-adk", "transfer")
    assert (run.agent_name, run.final_agent, run.output) == ("coordinator", "weather_agent", ANSWER)
    assert [(step.from_agent, step.to_agent) for step in run.handoffs] == [("coordinator", "weather_agent")]
    assert [call.name for call in run.tool_calls] == ["get_weather"]


def test_a_workflow_inside_an_agents_run_is_a_step_of_it_though_it_asks_the_model() -> None:
    # OpenLIT's CrewAI: invoke_workflow crew > invoke_agent Weather Reporter > invoke_workflow
    # AgentExecutor, whose chat spans are the agent's model calls.
    (run,) = runs_of("openlit-crewai", "tool_then_answer")
    assert (run.agent_name, run.output, [call.name for call in run.tool_calls]) == (
        "Weather Reporter",
        ANSWER,
        ["get_weather"],
    )
