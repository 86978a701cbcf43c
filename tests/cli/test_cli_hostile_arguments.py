"""Numbers on the command line that no run count means, given to `score` and `calibrate` run as
subprocesses: one usage error naming the argument (exit code 2), not a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.cli.test_cli_input import _trace


@pytest.mark.parametrize("command", ["score", "calibrate"])
@pytest.mark.parametrize("value", ["-1", "0", "-99999999999999999999", "1.5", "nan"])
def test_a_concurrency_below_1_or_not_whole_is_a_usage_error_naming_it(
    tmp_path: Path, command: str, value: str
) -> None:
    traces = tmp_path / "traces.jsonl"
    traces.write_bytes(orjson.dumps(_trace(1)) + b"\n")
    config = tmp_path / "scorers.yaml"
    config.write_text("scorers:\n  - type: includes\n    args: {expected: sunny}\n")
    labels = tmp_path / "labels.jsonl"
    labels.write_text("")
    arguments = [str(traces), "-c", str(config)] + (
        ["--labels", str(labels)] if command == "calibrate" else []
    )
    done = subprocess.run(
        [sys.executable, "-m", "otel_scorers.cli", command, *arguments, f"--concurrency={value}"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert f"otel-scorers {command}: error: argument --concurrency: " in done.stderr
    assert "Traceback" not in done.stderr
