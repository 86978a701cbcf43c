"""A tool span that writes its failure as `error.type` under the GenAI tool keys
(`gen_ai.tool.error.type`, rig's `execute_tool`), its status left unset, is a failed call."""

from __future__ import annotations

import json
from pathlib import Path

from otel_scorers.runs.otlp_files import InputProblem, runs_from_files

TRACES = Path(__file__).parent.parent / "fixtures" / "traces" / "rig"


def test_a_tool_error_type_under_the_genai_tool_keys_is_a_failure() -> None:
    truth = json.loads((TRACES / "failing_tool.truth.json").read_text())["runs"][0]
    problems: list[InputProblem] = []
    (run,) = runs_from_files([TRACES / "failing_tool.json"], problems)
    assert not problems
    assert [(call.name, call.state == "error", call.result) for call in run.tool_calls] == [
        (call["name"], call["error"], call["result"]) for call in truth["tool_calls"]
    ]
