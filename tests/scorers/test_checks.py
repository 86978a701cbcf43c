"""The quick checks against docs/checks.md and every case of its vectors: Mastra's own scores
(ids `c…`), and the checks of structure (ids `s…`), whose expected values the spec gives."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from otel_scorers import bind, checks
from otel_scorers.config import make_scorer
from otel_scorers.model import AgentRun, Score, ToolCall, ToolDefinition
from otel_scorers.pipeline.scorer_call import evaluate, to_score
from otel_scorers.scorers.declarations import DECLARED

VECTORS = json.loads((Path(__file__).parent.parent / "data" / "checks-vectors.json").read_text())
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


def generated(spec: dict[str, int]) -> str:
    """A hostile document a vector names rather than holds: `deep` arrays nested that many
    levels, or a `huge` JSON string of that many characters."""
    if "deep" in spec:
        return "[" * spec["deep"] + "]" * spec["deep"]
    return json.dumps("x" * (spec["huge"] - 2))


def vector_run(case: dict[str, Any]) -> AgentRun:
    """The run a vector describes: the output (or a generated one), tool calls with their
    arguments and results, the tools the trace declared, the fields it did not carry."""
    output = generated(case["output_generator"]) if "output_generator" in case else case["output"]
    calls = []
    for tool in case["tools"]:
        arguments = tool.get("arguments")
        if "arguments_generator" in tool:
            arguments = json.loads(generated(tool["arguments_generator"]))
        calls.append(
            ToolCall(
                tool["name"], arguments=arguments, result=tool.get("result"), state=STATES[tool["state"]]
            )  # type: ignore[arg-type]
        )
    return replace(
        make_run(output, missing=frozenset(case.get("missing", ()))),
        tool_calls=tuple(calls),
        tool_definitions=tuple(
            ToolDefinition(tool["name"], tool.get("parameters"), "gen_ai.tool.definitions")
            for tool in case.get("definitions", ())
        ),
    )


def score_case(case: dict[str, Any]) -> Score:
    binding = bind(make_scorer(case["check"], case["args"], case["id"]))
    result = evaluate(binding, vector_run(case))
    assert isinstance(result, Score), "quick checks score synchronously"
    return result


def test_all_vectors_are_present() -> None:
    assert sum(1 for case in VECTORS if case["id"].startswith("c")) == 243
    assert sum(1 for case in VECTORS if case["id"].startswith("s")) == 78
    assert {case["check"] for case in VECTORS} == {
        d.kind for d in DECLARED if d.family in ("quick checks", "checks of structure")
    }


@pytest.mark.parametrize("case", VECTORS, ids=[case["id"] for case in VECTORS])
def test_vector(case: dict[str, Any]) -> None:
    score = score_case(case)
    if "reason_contains" in case:
        said = score.reason or score.skipped or ""
        assert case["reason_contains"] in said, said
    if case.get("expected_skipped"):
        assert score.skipped and score.value is None and "\n" not in score.skipped
        return
    if "expected_error" in case:
        assert score.error is not None and score.error.type == case["expected_error"], score
        assert score.value is None and score.error.message
        return
    assert score.error is None and score.skipped is None
    assert score.value == pytest.approx(case["expected_score"], abs=1e-9)
    assert score.reason and "\n" not in score.reason, "every result says in one line what decided it"
    binary = case["check"] != "similarity" or case["args"].get("threshold") is not None
    if binary:
        assert score.label == ("pass" if case["expected_score"] == 1 else "fail")
    else:
        assert score.label is None


def test_python_api_takes_the_first_argument_positionally() -> None:
    run = make_run(
        "It is sunny", [{"name": "get_weather", "state": "ok"}, {"name": "get_weather", "state": "ok"}]
    )
    assert checks.called_tool("get_weather", times=2).score(run).value == 1.0
    assert checks.called_tool("get_weather", times=3).score(run).value == 0.0
    assert checks.max_tool_calls(1).score(run).value == 0.0
    assert checks.no_tool_errors().score(run).value == 1.0
    assert checks.includes("SUNNY").score(run).value == 1.0
    assert checks.includes("SUNNY", ignore_case=False).score(run).value == 0.0
    assert checks.tool_order(["get_weather", "get_weather"]).score(run).value == 1.0
    assert checks.matches(re.compile(r"sun+y")).score(run).value == 1.0


def test_similarity_counts_code_points_not_utf16_units() -> None:
    # "🙂🙂" is one bigram of code points; in UTF-16 it would be three bigrams.
    assert checks.dice_similarity("a🙂🙂", "🙂🙂") == pytest.approx(2 * 1 / (2 + 1))


@pytest.mark.parametrize("check", ["includes", "excludes", "equals", "matches", "similarity"])
def test_text_checks_are_skipped_not_zero_when_output_was_not_captured(check: str) -> None:
    args = {"matches": {"pattern": "x"}, "excludes": {"unwanted": "x"}}.get(check, {"expected": "x"})
    binding = bind(make_scorer(check, args, "test"))
    score = evaluate(binding, make_run(None, missing=frozenset({"output"})))
    assert isinstance(score, Score)
    assert score.value is None and score.label is None
    assert score.skipped is not None and "output" in score.skipped


def test_tool_checks_still_score_runs_without_captured_content() -> None:
    run = make_run(None, [{"name": "get_weather", "state": "error"}], missing=frozenset({"output", "input"}))
    score = evaluate(bind(checks.no_tool_errors()), run)
    assert isinstance(score, Score) and score.value == 0.0 and score.label == "fail"


def test_an_empty_captured_output_is_scored() -> None:
    score = evaluate(bind(checks.includes("sunny")), make_run(""))
    assert isinstance(score, Score) and score.value == 0.0


def test_invalid_regex_names_the_pattern() -> None:
    with pytest.raises(ValueError, match=r"invalid pattern '\('"):
        checks.matches("(")
    with pytest.raises(ValueError, match="unknown flag"):
        checks.matches("a", flags="x")


@pytest.mark.parametrize(
    ("pattern", "flags", "output", "expected"),
    [
        # `^` + pattern + `$` as written, no group: "starts with a, or ends with b".
        ("a|b", "", "a and more", 1.0),
        ("a|b", "", "more and b", 1.0),
        ("a|b", "", "x a x b x", 0.0),
        # Without m, `$` is the very end: no trailing newline, unlike Python's `$`.
        ("sunny", "", "sunny\n", 0.0),
        ("sunny", "", "sunny", 1.0),
        # With m, a whole line matching is enough.
        ("sunny", "m", "cloudy\nsunny\nwarm", 1.0),
        ("sunny", "", "cloudy\nsunny\nwarm", 0.0),
        ("SUNNY", "i", "sunny", 1.0),
    ],
)
def test_matches_exact_anchors_the_pattern_as_written(
    pattern: str, flags: str, output: str, expected: float
) -> None:
    assert checks.matches(pattern, flags=flags, exact=True).score(make_run(output)).value == expected


def test_matches_exact_keeps_a_compiled_patterns_flags() -> None:
    check = checks.matches(re.compile("line two", re.IGNORECASE | re.MULTILINE), exact=True)
    assert check.score(make_run("line one\nLINE TWO")).value == 1.0


def test_a_catastrophic_pattern_does_not_hold_the_interpreter() -> None:
    import threading
    import time

    ticks = 0
    stop = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    other = threading.Thread(target=count)
    other.start()
    try:
        # The shape the hardening audit found: (a+)+$ on "a"*28 + "!" (18.8 s with `re`).
        # Within the binding's 1 s, or it would be a timeout error.
        score = evaluate(bind(checks.matches(r"(a+)+$"), timeout_s=1.0), make_run("a" * 28 + "!"))
        assert isinstance(score, Score)
        assert score.error is None and score.value == 0.0
        # A pattern that does backtrack for ever gives up at the binding's timeout, and the other
        # thread kept running all along (the search releases the interpreter lock).
        before = ticks
        score = evaluate(bind(checks.matches(r"(a|aa)+$"), timeout_s=0.3), make_run("a" * 60 + "!"))
    finally:
        stop.set()
        other.join()
    assert isinstance(score, Score)
    assert score.error is not None and score.error.type == "timeout"
    assert score.value is None
    # Holding the interpreter lock for the search's 0.3 s would leave it a tick or two at most.
    assert ticks - before >= 10, "the other thread ran while the pattern was searched"


def tools(*calls: tuple[str, str]) -> list[dict[str, str]]:
    return [{"name": name, "state": state} for name, state in calls]


@pytest.mark.parametrize(
    ("check", "output", "calls", "reason"),
    [
        (checks.called_tool("get_weather"), "x", tools(), "get_weather called 0 times, wanted at least once"),
        (
            checks.called_tool("get_weather", times=2),
            "x",
            tools(("get_weather", "ok")),
            "get_weather called once, wanted at least 2 times",
        ),
        (
            checks.max_tool_calls(2),
            "x",
            tools(("a", "ok"), ("b", "ok"), ("c", "ok")),
            "3 tool calls, at most 2 allowed",
        ),
        (checks.includes("sunny"), "It rains", tools(), 'output does not contain "sunny"'),
        (
            checks.includes("Sunny", ignore_case=False),
            "sunny",
            tools(),
            'output does not contain "Sunny" (case-sensitive)',
        ),
        (checks.excludes("sorry"), "Sorry!", tools(), 'output contains "sorry"'),
        (checks.equals("paris"), "Paris.", tools(), 'output differs from "paris" (length 6)'),
        (
            checks.equals("paris"),
            "parks",
            tools(),
            'output differs from "paris" (first difference at character 4)',
        ),
        (checks.matches(r"\d+°C", exact=True), "21°C!", tools(), "output does not match /\\d+°C/ as a whole"),
        (
            checks.similarity("abcd", threshold=0.9),
            "abce",
            tools(),
            'bigram similarity 0.67 to "abcd", below 0.9',
        ),
        (
            checks.did_not_call("delete_user"),
            "x",
            tools(("delete_user", "ok")),
            "delete_user called once, wanted never",
        ),
        (
            checks.tool_order(["search", "summarize"]),
            "x",
            tools(("summarize", "ok"), ("search", "ok")),
            "summarize (step 2 of 2) not called after search; calls: summarize, search",
        ),
        (checks.used_no_tools(), "x", tools(("search", "ok")), "1 tool call (search), wanted none"),
        (
            checks.no_tool_errors(),
            "x",
            tools(("search", "incomplete"), ("a", "error")),
            "search did not finish (and 1 more)",
        ),
        (checks.no_tool_errors(), "x", tools(("search", "ok")), "1 tool call, none failed"),
    ],
)
def test_a_reason_says_what_decided_the_value(
    check: checks.Check, output: str, calls: list[dict[str, str]], reason: str
) -> None:
    score = evaluate(bind(check), make_run(output, calls))
    assert isinstance(score, Score) and score.reason == reason


def test_a_scorers_score_keeps_every_field_but_the_bindings_own() -> None:
    """What a binding makes of a returned `Score`: the scorer's fields, the binding's name, a label
    from its threshold when the score has none, the timing it measured when the score has none,
    the inclusion probability its own sampling gives (none at a rate of 1), its evaluator version
    and whether its scorer is binary."""
    from dataclasses import fields, replace

    from otel_scorers import bind
    from otel_scorers.model import JudgeUsage, Score, ScoreError

    given = Score(
        "inner",
        value=0.5,
        reason="why",
        details={"k": 1},
        error=ScoreError("kind", "message"),
        skipped="skipped",
        usage=JudgeUsage(model="m", input_tokens=1, output_tokens=2),
        sampling_probability=0.5,
    )
    binding = bind(lambda run: given, name="outer", threshold=0.4)
    made = to_score(binding, given, 0.25, 7)
    assert made == replace(
        given,
        scorer="outer",
        label="pass",
        duration_s=0.25,
        start_ns=7,
        sampling_probability=None,
        evaluator_version=binding.evaluator_version,
        binary=False,  # the binding's scorer, a function, does not declare itself binary
    )
    assert binding.evaluator_version is not None
    assert {field.name for field in fields(Score)} == {
        "scorer", "value", "label", "reason", "details", "error", "skipped", "duration_s", "usage", "start_ns",
        "sampling_probability", "evaluator_version", "binary",
    }  # fmt: skip
    # A check's score is marked binary by its binding: counted, not measured, in the metrics.
    check = evaluate(bind(checks.includes("sunny")), make_run("It is sunny."))
    assert isinstance(check, Score) and check.binary and check.label == "pass"
