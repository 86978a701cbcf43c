"""A handoff nothing in the trace records, read from how one workflow's agents ran
(`runs/untold_handoffs.py`), on traces captured from real packages."""

from __future__ import annotations

from tests.runs.fixture_runs import runs_of


def test_agents_taking_turns_in_one_workflow_without_tasks_of_their_own_are_one_run_handing_on() -> None:
    # OpenTelemetry's OpenAI Agents instrumentation without the OpenAI client's: the workflow,
    # the agents' and the tools' spans only, no span of the handoff and no model call asking it.
    runs = runs_of("otel-genai-openai-agents", "handoff_without_model_spans")
    assert [run.agent_name for run in runs] == ["triage_agent"]
    (run,) = runs
    assert [(h.from_agent, h.to_agent) for h in run.handoffs] == [("triage_agent", "weather_agent")]
    assert run.final_agent == "weather_agent"
    assert [call.name for call in run.tool_calls] == ["get_time", "get_weather"]
    assert run.input is None and run.output is None and {"input", "output"} <= run.missing


def test_agents_of_one_workflow_given_tasks_of_their_own_stay_runs_of_their_own() -> None:
    # A CrewAI crew under OpenLIT: two agents one after another in `invoke_workflow crew`, each
    # asking the model about its own task.
    runs = runs_of("openlit-crewai", "two_agents")
    assert [(run.agent_name, run.handoffs) for run in runs] == [
        ("Weather Reporter", ()),
        ("Travel Writer", ()),
    ]
