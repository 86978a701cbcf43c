"""Runs joined across traces by a handoff, on a swarm whose agents are each a trace of their own
(Strands' Swarm under LoongSuite, which suppresses the span the swarm's agents run under)."""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from pathlib import Path

from otel_scorers.model import AgentRun
from otel_scorers.runs.explain import explain_files, explanation_lines
from otel_scorers.runs.handed_traces import HandedTraces
from otel_scorers.runs.otlp_files import read_spans
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanRecord

from .fixture_runs import TRACES, runs_of

SWARM = TRACES / "loongsuite-strands" / "swarm_handoff.json"


def traces_of(path: Path) -> list[list[SpanRecord]]:
    """The file's traces, each its spans, in the order their first span started."""
    traces: dict[int, list[SpanRecord]] = defaultdict(list)
    for span in read_spans(path, []):
        traces[span.trace_id].append(span)
    return sorted(traces.values(), key=lambda spans: min(span.start_ns for span in spans))


def handed(traces: list[list[SpanRecord]], joining: HandedTraces) -> list[AgentRun]:
    runs = [run for spans in traces for run in joining.add(spans, build_runs(spans))]
    return runs + list(joining.rest())


def test_a_swarm_whose_agents_are_traces_of_their_own_is_one_run() -> None:
    truth = json.loads(SWARM.with_suffix("").with_suffix(".truth.json").read_text())["runs"]
    assert len(traces_of(SWARM)) == 2  # no span ties them: no parent, no link, no shared id
    (run,) = runs_of("loongsuite-strands", "swarm_handoff")
    (expected,) = truth
    assert (run.agent_name, run.input, run.output) == (
        expected["agent_name"],
        expected["input"],
        expected["output"],
    )
    assert [(call.name, call.arguments, call.result) for call in run.tool_calls] == [
        (call["name"], call["arguments"], call["result"]) for call in expected["tool_calls"]
    ]
    assert [(item.from_agent, item.to_agent) for item in run.handoffs] == [
        (item["from"], item["to"]) for item in expected["handoffs"]
    ]
    assert run.final_agent == expected["final_agent"]


def test_a_handoff_not_taken_up_within_the_window_gives_its_runs_as_they_are() -> None:
    joining = HandedTraces(window_ns=0)
    runs = handed(traces_of(SWARM), joining)
    assert [run.agent_name for run in runs] == ["triage_agent", "weather_agent"]
    assert (joining.joined, joining.given_up, joining.held) == (0, 1, 0)


def test_held_traces_beyond_their_bound_give_their_runs_as_they_are() -> None:
    joining = HandedTraces(max_held=0)
    runs = handed(traces_of(SWARM), joining)
    assert sorted(run.agent_name or "" for run in runs) == ["triage_agent", "weather_agent"]
    assert joining.joined == 0


def test_a_run_of_the_agent_handed_to_in_another_process_does_not_continue_it() -> None:
    first, second = traces_of(SWARM)
    elsewhere = [dataclasses.replace(span, resource={"service.instance.id": "another"}) for span in second]
    assert len(handed([first, elsewhere], HandedTraces())) == 2


def test_a_run_that_does_not_carry_the_conversation_on_does_not_continue_it() -> None:
    # The agent handed to, in the same process, given another request: another user's run.
    first, second = traces_of(SWARM)
    other = [
        dataclasses.replace(
            span,
            attributes={
                key: "Tell me a joke." if key == "gen_ai.input.messages" else value
                for key, value in span.attributes.items()
            },
        )
        for span in second
    ]
    assert len(handed([first, other], HandedTraces())) == 2


def test_explain_says_which_run_a_handoff_across_traces_joined() -> None:
    first, second = traces_of(SWARM)
    lines = [line for explanation in explain_files([SWARM], []) for line in explanation_lines(explanation)]
    assert any(
        "hands the conversation to weather_agent" in line and f"{second[0].trace_id:032x}" in line
        for line in lines
    )
    assert any(
        line.startswith("  its run goes on the run of triage_agent") and f"{first[0].trace_id:032x}" in line
        for line in lines
    )
