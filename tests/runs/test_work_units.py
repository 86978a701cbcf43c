"""A span an instrumentation writes for every unit of work (OpenLLMetry's `workflow`) is a run
only with spans under it: on traces captured from real packages (tests/fixtures/traces)."""

from __future__ import annotations

from tests.runs.fixture_runs import runs_of


def test_workflow_spans_each_alone_in_its_trace_are_no_runs() -> None:
    # OpenLLMetry's LangChain.js instrumentation loses each callback's parent: the graph, each
    # of its nodes and each model call is a trace of its own, the nodes `workflow` spans too.
    for scenario in ("no_tool", "tool_then_answer", "two_tools", "nested"):
        assert [run.agent_name for run in runs_of("openllmetry-langchainjs", scenario)] == []


def test_a_workflow_span_with_the_agents_work_under_it_is_still_a_run() -> None:
    # OpenLLMetry's Python LangChain instrumentation: the graph's `workflow` span holds its steps.
    runs = runs_of("langgraph-openllmetry", "tool_then_answer")
    assert [(run.agent_name, [call.name for call in run.tool_calls]) for run in runs] == [
        ("weather_agent", ["get_weather"])
    ]
