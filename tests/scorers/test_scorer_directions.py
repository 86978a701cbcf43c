"""Every scorer labels in the direction its documentation gives: with a threshold, `pass` means at
least the threshold, except where its page says higher is worse (hallucination, bias, toxicity in
docs/llm-scorers.md; `tool_error_rate` and `user_frustration` in docs/conversations.md), where it
means at most the threshold. The direction each scorer declares (`scorers/declarations.py`) is
held to its page's words and to the labels its binding gives."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from otel_scorers.cli.main import main
from otel_scorers.config import parse_config
from otel_scorers.pipeline.scorer_call import label
from otel_scorers.scorers.declarations import DECLARED, Declared

from ..spans import conversations_file

DOCS = Path(__file__).resolve().parent.parent.parent / "docs"
JUDGE = {"model": "openai/judge", "api_base": "http://127.0.0.1:9/v1", "api_key": "none"}
RUN_SCORERS = [pytest.param(d, id=d.kind) for d in DECLARED if not d.conversation]
CONVERSATION_SCORERS = [pytest.param(d, id=d.kind) for d in DECLARED if d.conversation]


def _says_higher_is_worse(name: str, page: str) -> bool:
    text = " ".join((DOCS / page).read_text().split())
    return bool(re.search(rf"[^.]*`?{name}`?[^.]*higher is worse[^.]*|[^.]*higher is worse[^.]*{name}", text))


def test_the_docs_say_which_scorers_are_worse_when_higher() -> None:
    worse = {d.kind for d in DECLARED if d.higher_is_worse}
    assert worse == {"hallucination", "bias", "toxicity", "tool_error_rate", "user_frustration"}
    for declared in DECLARED:
        if declared.higher_is_worse:
            assert _says_higher_is_worse(declared.kind, declared.docs), (
                f"{declared.docs} does not say that {declared.kind} is worse when higher"
            )


@pytest.mark.parametrize("declared", RUN_SCORERS)
def test_a_run_scorer_passes_in_its_documented_direction(declared: Declared) -> None:
    entry = {"type": declared.kind, "threshold": 0.5, "args": dict(declared.example_args)}
    (binding,) = parse_config({"judge": JUDGE, "scorers": [entry]}).scoring().bindings
    expected = ("pass", "fail") if declared.higher_is_worse else ("fail", "pass")
    assert (label(binding, 0.2), label(binding, 0.8)) == expected
    assert label(binding, 0.5) == "pass"


@pytest.mark.parametrize("declared", CONVERSATION_SCORERS)
def test_a_conversation_scorer_passes_in_its_documented_direction(declared: Declared) -> None:
    entry = {"type": declared.kind, "threshold": 0.5, "args": dict(declared.example_args)}
    config = parse_config({"judge": JUDGE, "conversations": {"scorers": [entry]}})
    settings = config.scoring().conversations
    assert settings is not None
    (binding,) = settings.bindings
    expected = ("pass", "fail") if declared.higher_is_worse else ("fail", "pass")
    assert (binding.label(0.2), binding.label(0.8)) == expected
    assert binding.label(0.5) == "pass"


def _labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, threshold: float, traces: Path
) -> dict[str, tuple[float, str]]:
    """Each conversation's value and label from `otel-scorers score`."""
    config = tmp_path / f"{kind}.yaml"
    config.write_text(
        yaml.safe_dump({"conversations": {"scorers": [{"type": kind, "threshold": threshold}]}})
    )
    main(["score", str(traces), "-c", str(config)])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return {
        line["conversation_id"]: (line["value"], line["label"]) for line in lines if line["scorer"] == kind
    }


def test_user_frustration_passes_a_conversation_with_no_repeated_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = conversations_file(
        tmp_path / "traces.jsonl",
        {
            "served": [("Book a flight to Lisbon", []), ("Now a hotel near the old town", [])],
            "asked-again": [("Book a flight to Lisbon", []), ("book a flight to Lisbon", [])],
        },
    )
    # docs/conversations.md's own example: `threshold: 0.3`
    assert _labels(tmp_path, capsys, "user_frustration", 0.3, traces) == {
        "served": (0.0, "pass"),
        "asked-again": (1.0, "fail"),
    }


def test_tool_error_rate_passes_few_failed_calls_and_fails_many(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = conversations_file(
        tmp_path / "traces.jsonl",
        {
            "none-failed": [("Weather in Paris?", [False]), ("And in Rome?", [False])],
            "two-of-three": [("Weather in Paris?", [True, False]), ("And in Rome?", [True])],
        },
    )
    assert _labels(tmp_path, capsys, "tool_error_rate", 0.5, traces) == {
        "none-failed": (0.0, "pass"),
        "two-of-three": (pytest.approx(2 / 3), "fail"),
    }
