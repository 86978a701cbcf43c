"""`calibrate` when the judge and people label in different words (`relevant`/`not_relevant`
against `pass`/`fail`): every pair would be a disagreement and κ would read 0, so it warns, names
both sets of words, and fails `--min-kappa` whatever K is."""

from __future__ import annotations

import json
from pathlib import Path

from otel_scorers.labels.agreement import Label
from otel_scorers.labels.label_records import labels_json
from otel_scorers.runs.otlp_files import runs_from_files
from tests.cli.test_score_gate import run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def labels_for_every_run(tmp_path: Path, yes: str, no: str) -> Path:
    """People's verdicts on `no_tool_errors` for each example run, agreeing with the check."""
    labels = [
        Label(
            "no_tool_errors",
            run.trace_id,
            run.span_id,
            label=no if any(c.failed for c in run.tool_calls) else yes,
        )
        for run in runs_from_files([EXAMPLES / "traces.json"], [])
    ]
    path = tmp_path / f"labels-{yes}.jsonl"
    path.write_text(labels_json(labels))
    return path


def config(tmp_path: Path) -> Path:
    path = tmp_path / "scorers.yaml"
    path.write_text("scorers:\n  - type: no_tool_errors\n")
    return path


def test_labels_in_other_words_warn_and_fail_the_kappa_gate(tmp_path: Path) -> None:
    labels = labels_for_every_run(tmp_path, "relevant", "not_relevant")
    result = run_cli(
        "calibrate", "-c", str(config(tmp_path)), "--labels", str(labels),
        str(EXAMPLES / "traces.json"), "--min-kappa", "0",
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert (
        "warning: no_tool_errors: the judge's labels (fail, pass) and people's (not_relevant, relevant) "
        "share no word" in result.stderr
    )
    assert "gate failed: no_tool_errors: no label word shared" in result.stderr
    (document,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert document["agreement"] == 0.0  # what the warning explains


def test_labels_in_the_scorer_s_words_pass(tmp_path: Path) -> None:
    labels = labels_for_every_run(tmp_path, "pass", "fail")
    result = run_cli(
        "calibrate", "-c", str(config(tmp_path)), "--labels", str(labels),
        str(EXAMPLES / "traces.json"), "--min-kappa", "0.9",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "share no word" not in result.stderr
    (document,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert document["kappa"] == 1.0
