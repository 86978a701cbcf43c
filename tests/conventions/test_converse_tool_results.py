"""A tool's result recorded as the Bedrock Converse `toolResult` a framework sent the model
(`{"toolUseId", "status", "content": [{"text": ...} | {"json": ...}]}`: Strands' `ToolResult`)
reads as what the tool returned, failed when its status says so, whichever reader claimed the span."""

from __future__ import annotations

import json
from pathlib import Path

from otel_scorers.conventions.formats.converse import tool_result
from otel_scorers.runs.otlp_files import InputProblem, runs_from_files

TRACES = Path(__file__).parent.parent / "fixtures" / "traces" / "loongsuite-strands"


def test_a_converse_tool_result_is_what_the_tool_returned() -> None:
    truth = json.loads((TRACES / "two_tools.truth.json").read_text())
    problems: list[InputProblem] = []
    (run,) = runs_from_files([TRACES / "two_tools.json"], problems)
    assert not problems
    assert [(call.name, call.result, call.state) for call in run.tool_calls] == [
        (call["name"], call["result"], "ok") for call in truth["runs"][0]["tool_calls"]
    ]


def test_a_converse_tool_result_with_status_error_is_a_failure() -> None:
    failed = {"toolUseId": "call_1", "status": "error", "content": [{"text": "Error: service down"}]}
    assert tool_result(failed) == ("Error: service down", "Error: service down")
    assert tool_result({"toolUseId": "c", "status": "success", "content": [{"json": {"t": 21}}]}) == (
        {"t": 21},
        None,
    )
    assert tool_result({"status": "success", "content": "plain"}) is None
    assert tool_result({"toolUseId": "c", "status": "success", "content": [{"text": "a"}], "x": 1}) is None
