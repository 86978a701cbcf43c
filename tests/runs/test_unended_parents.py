"""Spans whose parent was never exported (an instrumentation that did not end its agent span when
a tool raised or the agent handed on) are the work of the invocation of the agent they name; read
on traces captured from Google ADK under LoongSuite's instrumentation
(tests/fixtures/traces/loongsuite-google-adk)."""

from __future__ import annotations

from otel_scorers.runs.explain import explain_files, explanation_lines
from otel_scorers.runs.otlp_files import read_spans
from otel_scorers.runs.span_roles import span_roles

from .fixture_runs import TRACES, runs_of

CORPUS = "loongsuite-google-adk"
PARIS = "What is the weather in Paris?"


def test_the_trace_misses_the_agent_span_its_model_and_tool_spans_name_as_parent() -> None:
    spans = list(read_spans(TRACES / CORPUS / "failing_tool.json", []))
    ids = {span.span_id for span in spans}
    cut_off = [span for span in spans if span.parent_span_id is not None and span.parent_span_id not in ids]
    assert sorted(span.name for span in cut_off) == [
        "chat scripted-model",
        "execute_tool get_weather",
        "generate_content scripted-model",
    ]
    # Put back under ADK's `invoke_agent weather_agent`, the invocation of the agent they name.
    found = span_roles(spans)
    (agent,) = [span for span in found.by_id.values() if span.name == "invoke_agent weather_agent"]
    assert {found.by_id[span.span_id].parent_span_id for span in cut_off} == {agent.span_id}


def test_a_run_whose_tool_raised_is_one_run_of_its_agent_with_the_failed_call() -> None:
    (run,) = runs_of(CORPUS, "failing_tool")
    assert run.agent_name == "weather_agent" and run.input == PARIS
    assert [(call.name, call.arguments, call.state) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "error")
    ]


def test_a_run_handed_on_to_a_sub_agent_is_named_after_the_agent_it_started_with() -> None:
    (run,) = runs_of(CORPUS, "transfer")
    assert (run.agent_name, run.input, run.output) == ("coordinator", PARIS, "It is sunny and 21°C in Paris.")
    assert [(handoff.from_agent, handoff.to_agent) for handoff in run.handoffs] == [
        ("coordinator", "weather_agent")
    ]
    assert run.final_agent == "weather_agent"
    assert [call.name for call in run.tool_calls] == ["get_weather"]


def test_explain_says_which_span_a_span_whose_parent_never_arrived_is_read_under() -> None:
    lines = [
        line
        for explanation in explain_files([TRACES / CORPUS / "failing_tool.json"], [])
        for line in explanation_lines(explanation)
    ]
    (agent,) = [line for line in lines if "'invoke_agent weather_agent'" in line]
    agent_id = agent.split()[1]
    placed = [line for line in lines if "its parent never arrived" in line]
    assert len(placed) == 3
    assert all(line.endswith(f"read under span {agent_id})") for line in placed)
