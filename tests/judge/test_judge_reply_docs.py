"""docs/judge-replies.md is what the code sends: the page is the generator's output, and each
schema on it is the one a real request to a judge server carries."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from otel_scorers.cli.main import main
from otel_scorers.scorers.declarations import DECLARED
from otel_scorers.scorers.reply_schemas import reply_schemas, reply_schemas_markdown

from ..judge_server import Status, judge_server

ROOT = Path(__file__).resolve().parent.parent.parent
PAGE = ROOT / "docs" / "judge-replies.md"
EXAMPLE_ARGS = {d.kind: d.example_args for d in DECLARED}


def test_the_page_is_the_generators_output() -> None:
    assert PAGE.read_text() == reply_schemas_markdown(), (
        "regenerate it: python -m otel_scorers.scorers.reply_schemas > docs/judge-replies.md"
    )


def _documented() -> dict[str, object]:
    blocks = re.findall(r"^## `(\w+)`\n\n```json\n(.*?)\n```$", PAGE.read_text(), flags=re.M | re.S)
    return {kind: json.loads(schema) for kind, schema in blocks}


def test_every_judged_scorer_is_on_the_page() -> None:
    assert set(_documented()) == set(reply_schemas())
    assert {"answer_relevancy", "hallucination", "rubric", "multi_turn", "role_adherence"} <= set(
        _documented()
    )


def test_each_schema_on_the_page_is_the_one_a_request_carries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    documented = _documented()
    checked = []
    for kind in [
        "answer_relevancy",
        "bias",
        "toxicity",
        "prompt_alignment",
        "rubric",
        "tool_call_accuracy_llm",
    ]:
        with judge_server() as server:
            server.then(Status(500))  # one request is all it takes
            config = tmp_path / f"{kind}.yaml"
            args = dict(EXAMPLE_ARGS[kind])
            config.write_text(
                yaml.safe_dump(
                    {
                        "judge": {
                            "model": "openai/judge",
                            "api_base": server.url,
                            "api_key": "none",
                            "max_retries": 0,
                        },
                        "scorers": [{"type": kind, "args": args}],
                    }
                )
            )
            main(["score", str(ROOT / "examples" / "traces.json"), "-c", str(config), "--concurrency", "1"])
            capsys.readouterr()
            assert server.requests, kind
            sent = server.requests[0].body["response_format"]
        schema = sent.get("schema") or sent["json_schema"]["schema"]
        assert schema == documented[kind], kind
        checked.append(kind)
    assert len(checked) == 6
