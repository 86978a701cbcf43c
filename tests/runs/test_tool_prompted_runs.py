"""The run of an agent a tool prompts, when its instrumentation writes no span for it: rig writes
`invoke_agent` only for the agent the application prompted, and the agent a tool prompts leaves
its model calls (naming it) and its tool calls directly under the tool's span."""

from __future__ import annotations

import dataclasses
import json

from otel_scorers.runs.otlp_files import read_spans
from otel_scorers.runs.run_builder import build_runs

from .fixture_runs import TRACES, runs_of

NESTED = TRACES / "rig" / "nested.json"


def test_an_agent_a_tool_prompts_is_a_run_of_its_own_and_the_tool_s_call_keeps_its_result() -> None:
    truth = json.loads((TRACES / "rig" / "nested.truth.json").read_text())["runs"]
    runs = runs_of("rig", "nested")
    assert [run.agent_name for run in runs] == [run["agent_name"] for run in truth]
    for run, expected in zip(runs, truth, strict=True):
        assert (run.input, run.output) == (expected["input"], expected["output"])
        assert [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls] == [
            (call["name"], call["arguments"], call["result"], "ok") for call in expected["tool_calls"]
        ]


def test_model_calls_a_tool_makes_for_the_run_s_own_agent_are_the_tool_s_work() -> None:
    # The same trace with the calls under the tool naming the agent that called the tool: nothing
    # says another agent ran, so the tool's calls stay its work, as for any tool that asks a model.
    spans = [
        dataclasses.replace(span, attributes={**span.attributes, "gen_ai.agent.name": "trip_planner"})
        if span.attributes.get("gen_ai.agent.name") == "weather_agent"
        else span
        for span in read_spans(NESTED, [])
    ]
    (run,) = build_runs(spans)
    assert run.agent_name == "trip_planner"
    assert [call.name for call in run.tool_calls] == ["ask_weather_agent"]
