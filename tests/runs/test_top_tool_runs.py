"""A trace's root span read as a tool call, by a reader that marks no agent, is the run; in its
trace, a tool call's span under another tool's, around a loop of its own, is the agent it ran.

Prompt flow's `@trace` marks an agent's function and a tool's alike (`span_type: Function`): a
description can only say that such a span is a tool call. The function at the top of the trace
was called by no model: it is the application's unit of work, the run of the model calls it
holds. Read from the real traces (tests/fixtures/traces/promptflow-openai/) through `otel-scorers
runs` with a description given in the configuration, the truth from the generator's files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_scorers.cli.main import main

TRACES = Path(__file__).parent.parent / "fixtures" / "traces" / "promptflow-openai"
CONFIG = """
conventions:
  - name: functions
    scope: promptflow
    run:
      agent_name: {span: name}
    tool:
      when: {attributes: {span_type: Function}}
      arguments: inputs
      result: output
    model:
      when: {attributes: {span_type: LLM}}
      input: {attribute: inputs, path: messages}
      output: llm.generated_message
"""


@pytest.mark.parametrize("scenario", ["tool_then_answer", "search_then_summarize", "failing_tool"])
def test_the_function_at_the_top_of_the_trace_is_the_run(
    scenario: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    assert main(["runs", "-c", str(config), str(TRACES / f"{scenario}.json")]) == 0
    runs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    (expected,) = json.loads((TRACES / f"{scenario}.truth.json").read_text())["runs"]
    assert [(run["agent_name"], run["convention"]) for run in runs] == [(expected["agent_name"], "functions")]
    (run,) = runs
    assert (run["input"], run["output"]) == (expected["input"], expected["output"])
    calls = [(call["name"], call["arguments"], call["state"]) for call in run["tool_calls"]]
    wanted = [(c["name"], c["arguments"], "error" if c["error"] else "ok") for c in expected["tool_calls"]]
    assert calls == wanted


def test_a_loop_inside_a_tool_s_function_is_the_agent_the_tool_ran(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    assert main(["runs", "-c", str(config), str(TRACES / "nested.json")]) == 0
    runs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    truth = json.loads((TRACES / "nested.truth.json").read_text())["runs"]
    seen = [
        (run["agent_name"], run["input"], run["output"], [c["name"] for c in run["tool_calls"]])
        for run in runs
    ]
    wanted = [(t["agent_name"], t["input"], t["output"], [c["name"] for c in t["tool_calls"]]) for t in truth]
    assert sorted(seen) == sorted(wanted)
