"""An AI SDK span whose `ai.*` content an instrumentation rewrote into the GenAI keys (OpenLLMetry
JS's span processor) is read from those: the run's request and answer, the tool that ran, what it
was given and returned."""

from __future__ import annotations

import json
from pathlib import Path

from otel_scorers.runs.otlp_files import InputProblem, runs_from_files

TRACES = Path(__file__).parent.parent / "fixtures" / "traces" / "openllmetry-vercel"


def test_an_ai_sdk_run_rewritten_into_genai_keys_is_read_from_them() -> None:
    truth = json.loads((TRACES / "two_tools.truth.json").read_text())["runs"][0]
    problems: list[InputProblem] = []
    (run,) = runs_from_files([TRACES / "two_tools.json"], problems)
    assert not problems
    assert (run.agent_name, run.input, run.output) == (truth["agent_name"], truth["input"], truth["output"])
    assert [(call.name, call.arguments, call.result) for call in run.tool_calls] == [
        (call["name"], call["arguments"], call["result"]) for call in truth["tool_calls"]
    ]
    assert run.input_messages and run.output_messages
