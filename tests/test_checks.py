"""The quick checks against docs/checks.md and every case of its vectors (Mastra's own scores)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from otel_scorers import bind, checks
from otel_scorers.config import make_scorer
from otel_scorers.model import AgentRun, Score, ToolCall

VECTORS = json.loads((Path(__file__).parent / "data" / "checks-vectors.json").read_text())
STATES = {"ok": "ok", "error": "error", "incomplete": "incomplete", "result-error": "result_error"}


def make_run(
    output: str | None, tools: list[dict[str, str]] = (), missing: frozenset[str] = frozenset()
) -> AgentRun:  # type: ignore[assignment]
    return AgentRun(
        trace_id=0xFFFF_FFFF_FFFF_FFFF_FFFF_FFFF_FFFF_FFFF,
        span_id=1,
        agent_name="agent",
        input="question",
        output=output,
        tool_calls=tuple(ToolCall(name=tool["name"], state=STATES[tool["state"]]) for tool in tools),  # type: ignore[arg-type]
        missing=missing,
    )


def score_case(case: dict[str, Any]) -> Score:
    binding = bind(make_scorer(case["check"], case["args"], case["id"]))
    result = binding.evaluate(make_run(case["output"], case["tools"]))
    assert isinstance(result, Score), "quick checks score synchronously"
    return result


def test_all_243_vectors_are_present() -> None:
    assert len(VECTORS) == 243
    assert {case["check"] for case in VECTORS} == set(checks.CHECKS)


@pytest.mark.parametrize("case", VECTORS, ids=[case["id"] for case in VECTORS])
def test_vector(case: dict[str, Any]) -> None:
    score = score_case(case)
    assert score.error is None and score.skipped is None
    assert score.value == pytest.approx(case["expected_score"], abs=1e-9)
    binary = case["check"] != "similarity" or case["args"].get("threshold") is not None
    if binary:
        assert score.label == ("pass" if case["expected_score"] == 1 else "fail")
    else:
        assert score.label is None


def test_python_api_takes_the_first_argument_positionally() -> None:
    run = make_run(
        "It is sunny", [{"name": "get_weather", "state": "ok"}, {"name": "get_weather", "state": "ok"}]
    )
    assert checks.called_tool("get_weather", times=2).score(run) == 1.0
    assert checks.called_tool("get_weather", times=3).score(run) == 0.0
    assert checks.max_tool_calls(1).score(run) == 0.0
    assert checks.no_tool_errors().score(run) == 1.0
    assert checks.includes("SUNNY").score(run) == 1.0
    assert checks.includes("SUNNY", ignore_case=False).score(run) == 0.0
    assert checks.tool_order(["get_weather", "get_weather"]).score(run) == 1.0
    assert checks.matches(re.compile(r"sun+y")).score(run) == 1.0


def test_similarity_counts_code_points_not_utf16_units() -> None:
    # "🙂🙂" is one bigram of code points; in UTF-16 it would be three bigrams.
    assert checks.dice_similarity("a🙂🙂", "🙂🙂") == pytest.approx(2 * 1 / (2 + 1))


@pytest.mark.parametrize("check", ["includes", "excludes", "equals", "matches", "similarity"])
def test_text_checks_are_skipped_not_zero_when_output_was_not_captured(check: str) -> None:
    args = {"matches": {"pattern": "x"}, "excludes": {"unwanted": "x"}}.get(check, {"expected": "x"})
    binding = bind(make_scorer(check, args, "test"))
    score = binding.evaluate(make_run(None, missing=frozenset({"output"})))
    assert isinstance(score, Score)
    assert score.value is None and score.label is None
    assert score.skipped is not None and "output" in score.skipped


def test_tool_checks_still_score_runs_without_captured_content() -> None:
    run = make_run(None, [{"name": "get_weather", "state": "error"}], missing=frozenset({"output", "input"}))
    score = bind(checks.no_tool_errors()).evaluate(run)
    assert isinstance(score, Score) and score.value == 0.0 and score.label == "fail"


def test_an_empty_captured_output_is_scored() -> None:
    score = bind(checks.includes("sunny")).evaluate(make_run(""))
    assert isinstance(score, Score) and score.value == 0.0


def test_invalid_regex_names_the_pattern() -> None:
    with pytest.raises(ValueError, match=r"invalid pattern '\('"):
        checks.matches("(")
    with pytest.raises(ValueError, match="unknown flag"):
        checks.matches("a", flags="x")
