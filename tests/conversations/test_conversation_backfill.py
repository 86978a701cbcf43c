"""`otel-scorers score` groups a conversation's turns across input files and scores it once, at the
end of the input."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from otel_scorers.cli.main import main

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"


def _split_by_trace(source: Path, directory: Path) -> list[Path]:
    """One file per trace of an OTLP/JSON file: the two turns of its conversation, in two files."""
    request = json.loads(source.read_text())
    trace_ids = sorted(
        {
            span["traceId"]
            for rs in request["resourceSpans"]
            for ss in rs["scopeSpans"]
            for span in ss["spans"]
        }
    )
    paths = []
    for n, trace_id in enumerate(trace_ids):
        part = copy.deepcopy(request)
        for rs in part["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                ss["spans"] = [span for span in ss["spans"] if span["traceId"] == trace_id]
        path = directory / f"part-{n}.json"
        path.write_text(json.dumps(part))
        paths.append(path)
    return paths


def test_a_conversation_split_across_files_is_scored_once_with_every_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parts = _split_by_trace(TRACES / "pydantic-ai-v6" / "multi_turn.json", tmp_path)
    assert len(parts) == 2
    config = tmp_path / "scorers.yaml"
    config.write_text(
        "scorers:\n  - type: no_tool_errors\n"
        "conversations:\n  scorers:\n    - type: turns\n    - type: tool_error_rate\n"
    )
    files = [str(parts[0]), str(TRACES / "agno-openinference" / "multi_turn.json"), str(parts[1])]
    assert main(["score", *files, "-c", str(config)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    conversation_lines = [line for line in lines if "conversation_id" in line]
    turns = {
        line["conversation_id"]: line["value"] for line in conversation_lines if line["scorer"] == "turns"
    }
    # Two conversations: pydantic-ai's across two files, agno's in one; each scored once, whole.
    assert turns == {"01a236c3-11e4-7693-b1e3-238ec6f3f609": 2, "session-1": 2}
    assert all(line["ended_by"] == "end_of_input" for line in conversation_lines)
    assert sum(1 for line in lines if line["scorer"] == "no_tool_errors") == 4  # each run still scored
