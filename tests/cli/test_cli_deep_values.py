"""Tool arguments and results nested hundreds of levels deep in a trace file, through the CLI
run as a subprocess: `runs` writes every run, the deep values as the text that stands for them,
and `score --html` reports the failing run with them, beside a shallow run that keeps its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.cli.test_cli_input import _trace

#: What a value nested deeper than 64 levels is written as (docs/limits.md).
DEEPER = "(nested deeper than 64 levels)"


def _traces(path: Path, depth: int) -> Path:
    lines = []
    for number, agent, value in ((1, "shallow", '{"city": "Paris"}'), (2, "deep", "[" * depth + "]" * depth)):
        trace: dict[str, Any] = _trace(number)
        tool, _, run = trace["resourceSpans"][0]["scopeSpans"][0]["spans"]
        run["attributes"] += [
            {"key": "gen_ai.agent.name", "value": {"stringValue": agent}},
            {
                "key": "gen_ai.output.messages",
                "value": {
                    "stringValue": '[{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}]'
                },
            },
        ]
        tool["attributes"] += [
            {"key": key, "value": {"stringValue": value}}
            for key in ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result")
        ]
        lines.append(orjson.dumps(trace))
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "otel_scorers.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("depth", [300, 1_000])
def test_runs_writes_deep_tool_values_as_the_text_standing_for_them(tmp_path: Path, depth: int) -> None:
    done = _cli("runs", str(_traces(tmp_path / "traces.jsonl", depth)))
    assert done.returncode == 0, done.stderr
    calls = {run["agent_name"]: run["tool_calls"] for run in map(orjson.loads, done.stdout.splitlines())}
    assert calls["deep"][0]["arguments"] == calls["deep"][0]["result"] == DEEPER
    assert calls["shallow"][0]["arguments"] == {"city": "Paris"}


@pytest.mark.parametrize("depth", [300, 1_000])
def test_the_html_report_shows_a_failing_run_with_deep_tool_values(tmp_path: Path, depth: int) -> None:
    config = tmp_path / "scorers.yaml"
    config.write_text("scorers:\n  - type: includes\n    args: {expected: sunny}\n")
    report = tmp_path / "report.html"
    done = _cli(
        "score", str(_traces(tmp_path / "traces.jsonl", depth)), "-c", str(config), "--html", str(report)
    )
    assert done.returncode == 0, done.stderr
    page = report.read_text()
    assert page.count('<section class="case">') == 2, done.stderr
    assert DEEPER in page and "Paris" in page
