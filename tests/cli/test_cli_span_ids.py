"""Spans whose ids are not OTLP's (a trace id of 2 or 20 bytes, all zeros, a span id of 2 bytes,
a parent id of 3), in a trace file read by `otel-scorers runs` run as a subprocess: each is left
out alone, counted and named with what is wrong, and every other trace of the line is read; a
line holding bytes that are not UTF-8 is read with them replaced."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.cli.test_cli_input import _trace

#: (what is changed, the new value in OTLP/JSON's hex, spans refused, what the message says)
CASES = [
    ("traceId", "0102", 3, "an invalid trace_id (2 bytes, not 16)"),
    ("traceId", "ab" * 20, 3, "an invalid trace_id (20 bytes, not 16)"),
    ("traceId", "0" * 32, 3, "an invalid trace_id (all zeros)"),
    ("spanId", "0102", 1, "an invalid span_id (2 bytes, not 8)"),
    ("spanId", "0" * 16, 1, "an invalid span_id (all zeros)"),
    ("parentSpanId", "010203", 1, "an invalid parent_span_id (3 bytes, not 8)"),
]


def _named(number: int, agent: str) -> dict[str, Any]:
    trace: dict[str, Any] = _trace(number)
    trace["resourceSpans"][0]["scopeSpans"][0]["spans"][2]["attributes"].append(
        {"key": "gen_ai.agent.name", "value": {"stringValue": agent}}
    )
    return trace


@pytest.mark.parametrize(("key", "value", "refused", "message"), CASES)
def test_a_span_with_ids_that_are_not_otlps_is_left_out_alone_and_named(
    tmp_path: Path, key: str, value: str, refused: int, message: str
) -> None:
    line = _named(1, "good-1")
    bad = _named(2, "bad")
    spans = bad["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for span in spans if key == "traceId" else spans[1:2]:  # the model call's span, or all
        span[key] = value
    line["resourceSpans"] += bad["resourceSpans"] + _named(3, "good-3")["resourceSpans"]
    path = tmp_path / "traces.jsonl"
    path.write_bytes(orjson.dumps(line) + b"\n")
    done = subprocess.run(
        [sys.executable, "-m", "otel_scorers.cli", "runs", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    runs = [orjson.loads(out) for out in done.stdout.splitlines()]
    agents = sorted(run["agent_name"] for run in runs)
    assert agents == (["good-1", "good-3"] if refused == 3 else ["bad", "good-1", "good-3"]), done.stderr
    assert all(len(run["trace_id"]) == 32 and len(run["span_id"]) == 16 for run in runs)
    first = "the first " if refused > 1 else ""
    spans_left_out = f"{refused} spans" if refused > 1 else "1 span"
    assert f"{path}: {spans_left_out} left out, {first}span '" in done.stderr
    assert f"' has {message}" in done.stderr
    assert done.returncode == 1


def test_lines_holding_bytes_that_are_not_utf8_are_read_with_them_replaced(tmp_path: Path) -> None:
    # Each such line was refused whole, with its other traces: the first as the file's being binary.
    lines = []
    for number in range(3):
        trace = _named(number, f"agent-{number}")
        lines.append(orjson.dumps(trace))
    lines[0] = lines[0].replace(b"agent-0", b"first \xfe")
    lines[1] = lines[1].replace(b"agent-1", b"bad \xff name")
    path = tmp_path / "traces.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    done = subprocess.run(
        [sys.executable, "-m", "otel_scorers.cli", "runs", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    agents = sorted(orjson.loads(out)["agent_name"] for out in done.stdout.splitlines())
    assert agents == ["agent-2", "bad \ufffd name", "first \ufffd"]
    assert f"{path}:1 holds bytes that are not UTF-8" in done.stderr
