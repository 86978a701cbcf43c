"""Runs that no span marks, joined from model calls across traces by their conversation, on
traces of instrumentations that write no span for an agent's run (OpenLIT's LlamaIndex and AG2
instrumentations, OpenLLMetry's Haystack one)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from otel_scorers.runs import call_chains
from otel_scorers.runs.call_chains import FROM_JOINED_CALLS, CallChains
from otel_scorers.runs.explain import explain_files, explanation_lines
from otel_scorers.runs.otlp_files import read_spans
from otel_scorers.runs.span_roles import span_roles
from otel_scorers.span_record import SpanRecord

from .fixture_runs import TRACES, runs_of


def truth(corpus: str, scenario: str) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = json.loads((TRACES / corpus / f"{scenario}.truth.json").read_text())["runs"]
    return runs


def traces_of(path: Path) -> list[list[SpanRecord]]:
    """The file's traces, each its spans, in the order their first span started."""
    traces: dict[int, list[SpanRecord]] = defaultdict(list)
    for span in read_spans(path, []):
        traces[span.trace_id].append(span)
    return sorted(traces.values(), key=lambda spans: min(span.start_ns for span in spans))


def chat_trace_ids(corpus: str, scenario: str) -> list[int]:
    """The trace of each model call the file holds that carries its request, in start order."""
    spans = sorted(read_spans(TRACES / corpus / f"{scenario}.json", []), key=lambda span: span.start_ns)
    return [span.trace_id for span in spans if "gen_ai.input.messages" in span.attributes]


def test_a_run_no_span_marks_is_joined_from_its_model_calls_in_separate_traces() -> None:
    first_trace, second_trace = chat_trace_ids("openlit-llamaindex", "tool_then_answer")
    assert first_trace != second_trace  # each model call is a trace of its own
    (run,) = runs_of("openlit-llamaindex", "tool_then_answer")
    (expected,) = truth("openlit-llamaindex", "tool_then_answer")
    assert run.input == expected["input"]
    assert run.output == expected["output"]
    assert [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls] == [
        (call["name"], call["arguments"], call["result"], "ok") for call in expected["tool_calls"]
    ]
    # The run's span is its first call's, in that call's trace: where its scores go.
    assert run.trace_id == first_trace
    assert run.text_sources == {"input": FROM_JOINED_CALLS, "output": FROM_JOINED_CALLS}
    # The agent's name is in none of the calls: missing, not guessed.
    assert run.agent_name is None and "agent_name" in run.missing


def test_a_request_that_adds_a_user_message_starts_a_new_run() -> None:
    runs = runs_of("openllmetry-haystack", "two_runs")
    expected = truth("openllmetry-haystack", "two_runs")
    assert [(run.input, run.output) for run in runs] == [(run["input"], run["output"]) for run in expected]
    assert [[call.name for call in run.tool_calls] for run in runs] == [
        [call["name"] for call in run["tool_calls"]] for run in expected
    ]


def test_a_model_call_inside_a_span_naming_an_agent_is_that_agents_run() -> None:
    (run,) = runs_of("openlit-ag2", "no_tool")
    (expected,) = truth("openlit-ag2", "no_tool")
    assert (run.agent_name, run.input, run.output, run.tool_calls) == (
        expected["agent_name"],
        expected["input"],
        expected["output"],
        (),
    )


def test_a_single_model_call_that_offers_tools_is_a_run() -> None:
    (run,) = runs_of("openllmetry-haystack", "no_tool")
    (expected,) = truth("openllmetry-haystack", "no_tool")
    assert (run.input, run.output, run.tool_calls) == (expected["input"], expected["output"], ())


def test_a_lone_model_call_nothing_marks_as_an_agents_is_no_run() -> None:
    # LlamaIndex's agent answered without tools: its one call offers none in the trace and no span
    # names an agent, so nothing tells it from an application asking a model once.
    assert len(chat_trace_ids("openlit-llamaindex", "no_tool")) == 1
    assert runs_of("openlit-llamaindex", "no_tool") == []


def test_a_lone_model_call_given_the_instructions_of_an_earlier_agent_run_is_that_agents_next_turn() -> None:
    # The second turn of LlamaIndex's agent answered without tools in one call, in a trace of its
    # own that names no agent and offers no tools; it was given the system message the first
    # turn's calls, a tool loop, were given.
    first, second = runs_of("openlit-llamaindex", "multi_turn")
    expected = truth("openlit-llamaindex", "multi_turn")
    assert [(run.input, run.output) for run in (first, second)] == [
        (run["input"], run["output"]) for run in expected
    ]
    assert second.tool_calls == () and second.agent_name is None


def test_a_lone_model_call_given_instructions_no_agent_run_was_given_is_no_run() -> None:
    # The same two turns with the first turn's traces left out: nothing says the second is an agent's.
    chains = CallChains()
    third = traces_of(TRACES / "openlit-llamaindex" / "multi_turn.json")[-1]
    assert [run for run in chains.add(span_roles(third))] + list(chains.rest()) == []


def test_an_agent_is_remembered_within_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(call_chains, "MAX_AGENT_INSTRUCTIONS", 0)
    chains = CallChains()
    for spans in traces_of(TRACES / "openlit-llamaindex" / "multi_turn.json"):
        list(chains.add(span_roles(spans)))
    # Forgotten at once: the second turn's lone call is no run, as without the first.
    assert chains.tally.runs == 1


def test_a_call_of_llamaindex_s_handoff_tool_hands_the_run_on_to_the_agent_it_names() -> None:
    # OpenLIT writes no tool span: the `handoff` call (`to_agent: time_agent`) is only the model's
    # request. It is the run's handoff, not a tool call; the first agent is named nowhere.
    (run,) = runs_of("openlit-llamaindex", "handoff")
    assert [call.name for call in run.tool_calls] == ["get_weather", "get_time"]
    assert [(handoff.from_agent, handoff.to_agent) for handoff in run.handoffs] == [(None, "time_agent")]
    assert run.final_agent == "time_agent"


#: Cases read as more runs than their generator knows, and why (strict: one read right fails here).
MORE_RUNS_THAN_KNOWN: dict[str, str] = {
    "monocle-openai-agents/agent_as_tool": "Monocle writes no turn span around an agent run as a tool: "
    "its two turns under the tool's span are read as two runs",
}


def test_every_fixture_rebuilds_at_most_the_runs_its_generator_knows() -> None:
    for truth_path in sorted(TRACES.glob("*/*.truth.json")):
        corpus, scenario = truth_path.parent.name, truth_path.name.removesuffix(".truth.json")
        rebuilt, known = len(runs_of(corpus, scenario)), len(truth(corpus, scenario))
        if f"{corpus}/{scenario}" in MORE_RUNS_THAN_KNOWN:
            assert rebuilt > known, f"{corpus}/{scenario} is read right: drop it from MORE_RUNS_THAN_KNOWN"
        else:
            assert rebuilt <= known, f"{corpus}/{scenario}"


def test_a_chain_not_continued_within_the_window_is_built_as_it_is() -> None:
    # A window of 0: the first call's chain is complete before its continuation comes, and that
    # continuation, going on from a call no longer open, is counted rather than read as a run.
    chains = CallChains(window_ns=0)
    runs = [
        run
        for spans in traces_of(TRACES / "openlit-llamaindex" / "tool_then_answer.json")
        for run in chains.add(span_roles(spans))
    ]
    runs.extend(chains.rest())
    assert runs == []
    assert chains.tally.unseen_start == 1


def test_chains_beyond_the_count_are_closed_early_and_counted() -> None:
    chains = CallChains(max_open=0)
    for spans in traces_of(TRACES / "openlit-llamaindex" / "two_tools.json"):
        list(chains.add(span_roles(spans)))
    list(chains.rest())
    assert chains.tally.closed_early == 2  # both calls that asked for a tool waited for its result
    assert chains.tally.runs == 0


def test_explain_shows_the_run_joined_and_the_traces_it_is_joined_from() -> None:
    path = TRACES / "openlit-llamaindex" / "tool_then_answer.json"
    first_trace, second_trace = chat_trace_ids("openlit-llamaindex", "tool_then_answer")
    lines = [line for explanation in explain_files([path], []) for line in explanation_lines(explanation)]
    joined = [line for line in lines if "joined from the model calls of 2 traces" in line]
    assert len(joined) == 1
    assert f"{first_trace:032x}, {second_trace:032x}" in joined[0]
    assert f"  no run of its own: its model calls go on the run joined in trace {first_trace:032x}" in lines
    assert not any(line.startswith("  no run found") for line in lines)


def test_a_chain_at_its_length_bound_is_read_as_it_is_and_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(call_chains, "MAX_CHAIN_CALLS", 2)
    chains = CallChains()
    for spans in traces_of(TRACES / "openlit-llamaindex" / "two_tools.json"):
        list(chains.add(span_roles(spans)))
    list(chains.rest())
    # Two calls asked for a tool each: the chain of both is read at the bound; the answer, going
    # on from it, is not a run.
    assert chains.tally.closed_early == 1
    assert chains.tally.unseen_start == 1
