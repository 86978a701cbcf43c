"""The judge's one-time start-up (litellm's first import: seconds, tens of them on a loaded
machine) happens before a score's deadline starts: it never turns into timeouts that blame the
model, and it leaves no "coroutine ... was never awaited" behind.

litellm's real import is made slower than the deadlines by a `sitecustomize` that waits before
letting it proceed, in the command's own process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ..judge_server import ALL_RELEVANT, judge_server

ROOT = Path(__file__).resolve().parent.parent.parent
#: Deadlines no call to the judge on 127.0.0.1 comes near, even on a machine whose cores are busy:
#: the first test's import waits longer than the score's, the only way it could time out.
JUDGE_TIMEOUT_S = 10
SCORE_TIMEOUT_S = 12
TRACES = ROOT / "examples" / "traces.json"
SLOW_IMPORT = """\
import importlib.abc, sys, time

class _SlowLitellm(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "litellm":
            sys.meta_path.remove(self)
            time.sleep({delay})
        return None

sys.meta_path.insert(0, _SlowLitellm())
"""


def _score(
    tmp_path: Path, url: str, delay_s: float, load_s: float | None = None
) -> subprocess.CompletedProcess[str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOW_IMPORT.replace("{delay}", str(delay_s)))
    config = tmp_path / "scorers.yaml"
    config.write_text(
        f"judge: {{model: openai/judge, api_base: '{url}', api_key: none, timeout_s: {JUDGE_TIMEOUT_S}, max_retries: 0}}\n"
        f"scorers:\n  - type: answer_relevancy\n    timeout_s: {SCORE_TIMEOUT_S}\n"
    )
    command = ["-m", "otel_scorers.cli"]
    if load_s is not None:  # the bound on the client's loading, shortened for the test
        command = [
            "-c",
            f"import sys, otel_scorers.pipeline.scorer_call as b, otel_scorers.cli.main as c; b.JUDGE_CLIENT_LOAD_S = {load_s}; sys.exit(c.main())",
        ]
    return subprocess.run(
        [sys.executable, "-W", "default", *command, "score", str(TRACES), "-c", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])},
    )


def test_a_slow_first_import_of_the_judges_client_does_not_count_against_the_scores(tmp_path: Path) -> None:
    with judge_server(lambda _body: ALL_RELEVANT) as server:
        result = _score(tmp_path, server.url, delay_s=SCORE_TIMEOUT_S + 3)  # past the scorer's deadline
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 0, result.stderr
    assert [line["error"] for line in lines] == [None] * 6
    assert sum(1 for line in lines if line["value"] is not None) == 5  # one run without content: skipped
    assert server.calls == 5
    assert "never awaited" not in result.stderr, result.stderr


def test_a_client_that_does_not_load_in_time_is_named_in_the_error(tmp_path: Path) -> None:
    with judge_server(lambda _body: ALL_RELEVANT) as server:
        result = _score(tmp_path, server.url, delay_s=1, load_s=0.5)  # twice the bound
    errors = [json.loads(line)["error"] for line in result.stdout.splitlines()]
    assert result.returncode == 1
    assert [error for error in errors if error is not None] == [
        {
            "type": "timeout",
            "message": "the judge's client (litellm) did not load within 0.5s, its first import; no request was sent",
        }
    ] * 5
    assert server.calls == 0
    assert "never awaited" not in result.stderr, result.stderr
