"""The eleven quick checks: zero-LLM scorers with the semantics of Mastra's Quick Checks.

Each factory takes the spec's arguments (the first one positional) and returns a `Check`, a
scorer whose `score(run)` returns 1.0 or 0.0 (or, for `similarity` without a threshold, the raw
coefficient). Semantics: `docs/checks.md`; every case of its vectors is a test.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from otel_scorers.model import AgentRun

_NEEDS_OUTPUT = frozenset({"output"})
_NEEDS_NOTHING: frozenset[str] = frozenset()
_FAILED_STATES = frozenset({"error", "incomplete", "result_error"})


@dataclass(frozen=True, slots=True)
class Check:
    """A quick check bound to its arguments. Fast and synchronous: the engine runs it inline."""

    name: str
    score_run: Callable[[AgentRun], float] = field(repr=False)
    needs: frozenset[str] = _NEEDS_NOTHING
    binary: bool = True
    args: Mapping[str, Any] = field(default_factory=dict)

    def score(self, run: AgentRun) -> float:
        return self.score_run(run)


def _output(run: AgentRun) -> str:
    return run.output or ""


def includes(expected: str, *, ignore_case: bool = True) -> Check:
    """1 if `expected` is a substring of the output."""
    if ignore_case:
        lowered = expected.lower()
        score = _text_check(lambda out: lowered in out.lower())
    else:
        score = _text_check(lambda out: expected in out)
    return Check("includes", score, _NEEDS_OUTPUT, args={"expected": expected, "ignore_case": ignore_case})


def excludes(unwanted: str, *, ignore_case: bool = True) -> Check:
    """1 if `unwanted` is not a substring of the output."""
    if ignore_case:
        lowered = unwanted.lower()
        score = _text_check(lambda out: lowered not in out.lower())
    else:
        score = _text_check(lambda out: unwanted not in out)
    return Check("excludes", score, _NEEDS_OUTPUT, args={"unwanted": unwanted, "ignore_case": ignore_case})


def equals(expected: str, *, ignore_case: bool = True) -> Check:
    """1 if the output equals `expected` exactly (both lower-cased when `ignore_case`)."""
    if ignore_case:
        lowered = expected.lower()
        score = _text_check(lambda out: out.lower() == lowered)
    else:
        score = _text_check(lambda out: out == expected)
    return Check("equals", score, _NEEDS_OUTPUT, args={"expected": expected, "ignore_case": ignore_case})


_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}


def matches(pattern: str | re.Pattern[str], *, flags: str = "", exact: bool = False) -> Check:
    """1 if the regular expression is found in the output (with `exact`, matches all of it)."""
    if isinstance(pattern, re.Pattern):
        compiled = pattern
    else:
        unknown = set(flags) - set(_FLAGS)
        if unknown:
            raise ValueError(f"matches: unknown flag(s) {''.join(sorted(unknown))!r}; use any of i, m, s")
        bits = 0
        for flag in flags:
            bits |= _FLAGS[flag]
        try:
            compiled = re.compile(pattern, bits)
        except re.error as exc:
            raise ValueError(f"matches: invalid pattern {pattern!r}: {exc}") from exc
    find = compiled.fullmatch if exact else compiled.search
    return Check(
        "matches",
        _text_check(lambda out: find(out) is not None),
        _NEEDS_OUTPUT,
        args={"pattern": compiled.pattern, "flags": flags, "exact": exact},
    )


def dice_similarity(first: str, second: str, ignore_case: bool = True) -> float:
    """Dice coefficient of character bigrams, whitespace removed (spec: checks.md, similarity)."""
    if ignore_case:
        first, second = first.lower(), second.lower()
    first = "".join(first.split())
    second = "".join(second.split())
    if first == second:
        return 1.0
    if len(first) < 2 or len(second) < 2:
        return 0.0
    # Walking the second string's bigrams and consuming matches from the first's multiset
    # counts, for each bigram, the smaller of its two multiplicities: a multiset intersection.
    first_bigrams = Counter(pairwise(first))
    second_bigrams = Counter(pairwise(second))
    intersection = sum((first_bigrams & second_bigrams).values())
    return 2.0 * intersection / ((len(first) - 1) + (len(second) - 1))


def similarity(expected: str, *, threshold: float | None = None, ignore_case: bool = True) -> Check:
    """Bigram Dice coefficient of the output and `expected`; 1/0 against `threshold` when given."""
    if threshold is None:

        def score(run: AgentRun) -> float:
            return dice_similarity(_output(run), expected, ignore_case)

    else:

        def score(run: AgentRun) -> float:
            return 1.0 if dice_similarity(_output(run), expected, ignore_case) >= threshold else 0.0

    return Check(
        "similarity",
        score,
        _NEEDS_OUTPUT,
        binary=threshold is not None,
        args={"expected": expected, "threshold": threshold, "ignore_case": ignore_case},
    )


def called_tool(tool: str, *, times: int = 1) -> Check:
    """1 if calls named `tool` number at least `times` (whatever their state)."""

    def score(run: AgentRun) -> float:
        count = 0
        for call in run.tool_calls:
            if call.name == tool:
                count += 1
        return 1.0 if count >= times else 0.0

    return Check("called_tool", score, args={"tool": tool, "times": times})


def did_not_call(tool: str) -> Check:
    """1 if no call is named `tool`."""

    def score(run: AgentRun) -> float:
        for call in run.tool_calls:
            if call.name == tool:
                return 0.0
        return 1.0

    return Check("did_not_call", score, args={"tool": tool})


def tool_order(order: Sequence[str]) -> Check:
    """1 if `order` appears in the call names as a subsequence (greedy, left to right)."""
    wanted = tuple(order)

    def score(run: AgentRun) -> float:
        position = 0
        for call in run.tool_calls:
            if position < len(wanted) and call.name == wanted[position]:
                position += 1
        return 1.0 if position == len(wanted) else 0.0

    return Check("tool_order", score, args={"order": list(wanted)})


def max_tool_calls(max: int) -> Check:
    """1 if the number of calls is at most `max`."""
    limit = max
    return Check(
        "max_tool_calls", lambda run: 1.0 if len(run.tool_calls) <= limit else 0.0, args={"max": limit}
    )


def used_no_tools() -> Check:
    """1 if there are no calls."""
    return Check("used_no_tools", lambda run: 0.0 if run.tool_calls else 1.0)


def no_tool_errors() -> Check:
    """1 if no call is in state error, incomplete or result_error. A run without calls passes."""

    def score(run: AgentRun) -> float:
        for call in run.tool_calls:
            if call.state in _FAILED_STATES:
                return 0.0
        return 1.0

    return Check("no_tool_errors", score)


def _text_check(test: Callable[[str], bool]) -> Callable[[AgentRun], float]:
    def score(run: AgentRun) -> float:
        return 1.0 if test(run.output or "") else 0.0

    return score


#: Every check by its config `type`: a plain dict, the one registry of built-in checks.
CHECKS: dict[str, Callable[..., Check]] = {
    "includes": includes,
    "excludes": excludes,
    "equals": equals,
    "matches": matches,
    "similarity": similarity,
    "called_tool": called_tool,
    "did_not_call": did_not_call,
    "tool_order": tool_order,
    "max_tool_calls": max_tool_calls,
    "used_no_tools": used_no_tools,
    "no_tool_errors": no_tool_errors,
}
