"""`otel-scorers fake-judge`: one command starts a keyless judge whose replies are valid under
every judged scorer's schema (docs/judge-replies.md), so `score` with judged scorers pointed at it
scores every run and fails on none, alone or batched."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from otel_scorers.cli.main import main
from otel_scorers.demos.fake_judge import _Draw, fake_value
from otel_scorers.scorers.reply_schemas import reply_schemas
from tests.cli.test_score_gate import ROOT

EXAMPLES = ROOT / "examples"


@pytest.mark.parametrize(("kind", "schema"), sorted(reply_schemas().items()))
def test_each_reply_is_valid_under_its_scorer_s_schema(kind: str, schema: dict[str, object]) -> None:
    replies = [fake_value(schema, _Draw(f"request {n}")) for n in range(20)]
    for reply in replies:
        jsonschema.validate(reply, schema)
    assert fake_value(schema, _Draw("request 0")) == replies[0]  # the same request, the same reply


@pytest.fixture
def fake_judge() -> Iterator[str]:
    """`otel-scorers fake-judge --port 0` as a user starts it; its judge section's api_base."""
    process = subprocess.Popen(
        [sys.executable, "-m", "otel_scorers.cli", "fake-judge", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None
        process.stdout.readline()
        section = process.stdout.readline()  # judge: {model: ..., api_base: "http://..."}
        yield section.split('api_base: "')[1].split('"')[0]
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.parametrize("batch", [False, True], ids=["one call each", "batched"])
def test_score_with_judged_scorers_at_the_fake_judge_fails_on_no_run(
    fake_judge: str, tmp_path: Path, batch: bool, litellm_imported: None, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "scorers.yaml"
    config.write_text(
        f'judge: {{model: openai/fake-judge, api_base: "{fake_judge}", batch: {str(batch).lower()}}}\n'
        "scorers:\n"
        "  - type: answer_relevancy\n    args: {threshold: 0.5}\n"
        "  - type: toxicity\n    args: {threshold: 0.5}\n"
        "  - type: hallucination\n"
        "  - type: rubric\n    args: {criteria: [The answer names a temperature., The answer is polite.]}\n"
        "  - type: tool_call_accuracy_llm\n"
    )
    code = main(["score", "-c", str(config), str(EXAMPLES / "traces.json")])  # in this process
    out, err = capsys.readouterr()
    assert code == 0, err
    scores = [json.loads(line) for line in out.splitlines()]
    assert scores and all(score["error"] is None for score in scores), [s for s in scores if s["error"]]
    scored = {score["scorer"] for score in scores if score["value"] is not None}
    assert scored == {"answer_relevancy", "toxicity", "hallucination", "rubric", "tool_call_accuracy_llm"}
