"""The quick checks: zero-LLM scorers, eleven with the semantics of Mastra's Quick Checks, and the
checks of structure (`tool_args_valid`, `json_valid`, `json_schema`, `trajectory`).

Each factory takes the spec's arguments (the first one positional) and returns a `Check`, a
scorer whose `score(run)` returns a `Score` of 1.0 or 0.0 (or, for `similarity` without a
threshold, the raw coefficient) with a one-line reason that says what decided it. Semantics:
`docs/checks.md`; every case of its vectors is a test.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import pairwise

import regex

from otel_scorers.model import AgentRun, Score, ToolCall
from otel_scorers.scorers.json_checks import json_schema as json_schema
from otel_scorers.scorers.json_checks import json_valid as json_valid
from otel_scorers.scorers.quick_check import DEFAULT_REGEX_TIMEOUT_S as DEFAULT_REGEX_TIMEOUT_S
from otel_scorers.scorers.quick_check import Check as Check
from otel_scorers.scorers.quick_check import bounded_search as bounded_search
from otel_scorers.scorers.tool_args_check import tool_args_valid as tool_args_valid
from otel_scorers.scorers.trajectory_check import trajectory as trajectory

# `Check` and the bounded search live in `quick_check`, which the checks of structure import too
# (none of them imports this module); imported `as` themselves, they and the checks of structure
# stay names of this module (`checks.json_schema(...)`).

_NEEDS_OUTPUT = frozenset({"output"})
_NEEDS_TOOL_ERRORS = frozenset({"tool_errors"})
#: Tool checks read the calls: a trace that could not carry them (`tool_calls` in `missing`) is
#: skipped, or a run that called tools would pass `used_no_tools`.
_NEEDS_TOOL_CALLS = frozenset({"tool_calls"})
_FAILED_STATES = frozenset({"error", "incomplete", "result_error"})


def _check(
    name: str,
    score: Callable[[AgentRun], Score],
    needs: frozenset[str],
    args: dict[str, object] | None = None,
    *,
    binary: bool = True,
    retime: Callable[[float], Check] | None = None,
) -> Check:
    # Every check here makes a new `Score` on each call (`_verdict`), so the pipeline may keep it
    # as it is rather than copy it (`Check.fresh_scores`).
    return Check(name, score, needs, binary, args or {}, retime, fresh_scores=True)


def _verdict(name: str, passed: bool, reason: str) -> Score:
    # Positional: keyword arguments cost a check's score a quarter more to make.
    return Score(name, 1.0 if passed else 0.0, None, reason)


def _quote(text: str, limit: int = 60) -> str:
    """A user's text in a reason: quoted, and cut so one reason stays one short line."""
    shown = text if len(text) <= limit else text[: limit - 1] + "…"
    return '"' + shown.replace("\n", "\\n") + '"'


def _case_note(ignore_case: bool) -> str:
    return "" if ignore_case else " (case-sensitive)"


def includes(expected: str, *, ignore_case: bool = True) -> Check:
    """1 if `expected` is a substring of the output."""
    wanted = expected.lower() if ignore_case else expected
    quoted = _quote(expected) + _case_note(ignore_case)

    def score(run: AgentRun) -> Score:
        out = run.output or ""
        found = wanted in (out.lower() if ignore_case else out)
        return _verdict("includes", found, f"output {'contains' if found else 'does not contain'} {quoted}")

    return _check("includes", score, _NEEDS_OUTPUT, args={"expected": expected, "ignore_case": ignore_case})


def excludes(unwanted: str, *, ignore_case: bool = True) -> Check:
    """1 if `unwanted` is not a substring of the output."""
    avoided = unwanted.lower() if ignore_case else unwanted
    quoted = _quote(unwanted) + _case_note(ignore_case)

    def score(run: AgentRun) -> Score:
        out = run.output or ""
        found = avoided in (out.lower() if ignore_case else out)
        return _verdict(
            "excludes", not found, f"output {'contains' if found else 'does not contain'} {quoted}"
        )

    return _check("excludes", score, _NEEDS_OUTPUT, args={"unwanted": unwanted, "ignore_case": ignore_case})


def equals(expected: str, *, ignore_case: bool = True) -> Check:
    """1 if the output equals `expected` exactly (both lower-cased when `ignore_case`)."""
    wanted = expected.lower() if ignore_case else expected
    quoted = _quote(expected) + _case_note(ignore_case)

    def score(run: AgentRun) -> Score:
        out = run.output or ""
        seen = out.lower() if ignore_case else out
        if seen == wanted:
            return _verdict("equals", True, f"output equals {quoted}")
        at = next((i for i, (a, b) in enumerate(zip(seen, wanted, strict=False)) if a != b), None)
        where = f"first difference at character {at + 1}" if at is not None else f"length {len(out)}"
        return _verdict("equals", False, f"output differs from {quoted} ({where})")

    return _check("equals", score, _NEEDS_OUTPUT, args={"expected": expected, "ignore_case": ignore_case})


_FLAGS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL}
_RE_FLAGS = {re.IGNORECASE: "i", re.MULTILINE: "m", re.DOTALL: "s"}


def matches(
    pattern: str | re.Pattern[str],
    *,
    flags: str = "",
    exact: bool = False,
    timeout_s: float = DEFAULT_REGEX_TIMEOUT_S,
) -> Check:
    """1 if the regular expression is found in the output.

    With `exact`, as Mastra does: the output must match `^` + pattern + `$` as written (no group
    around the pattern) with the same flags, `$` being the very end unless `m` is set. A search
    holds the interpreter lock for a millisecond at most, goes on with it released, and gives up
    after `timeout_s` (a `TimeoutError`, an error result `timeout`), so a catastrophic pattern
    costs neither the host's threads nor more than that time. Both limits are the process's CPU
    time, the clock `regex` reads (C's `clock()`): other busy threads bring them sooner.
    """
    if isinstance(pattern, re.Pattern):
        flags = "".join(letter for bit, letter in _RE_FLAGS.items() if pattern.flags & bit)
        pattern = pattern.pattern
    unknown = set(flags) - set(_FLAGS)
    if unknown:
        raise ValueError(f"matches: unknown flag(s) {''.join(sorted(unknown))!r}; use any of i, m, s")
    bits = 0
    for flag in flags:
        bits |= _FLAGS[flag]
    # JavaScript's `$` without the m flag is the end of the text only; Python's also matches
    # before a final newline, so exact mode spells it `\Z`.
    source = f"^{pattern}{'$' if 'm' in flags else chr(92) + 'Z'}" if exact else pattern
    try:
        compiled = regex.compile(source, bits | regex.VERSION0)
    except regex.error as exc:
        raise ValueError(f"matches: invalid pattern {pattern!r}: {exc}") from exc
    shown = f"/{pattern}/{flags}" if len(pattern) <= 60 else f"/{pattern[:59]}…/{flags}"
    how = " as a whole" if exact else ""

    def score(run: AgentRun) -> Score:
        found = bounded_search(compiled, run.output or "", timeout_s) is not None
        return _verdict("matches", found, f"output {'matches' if found else 'does not match'} {shown}{how}")

    return _check(
        "matches",
        score,
        _NEEDS_OUTPUT,
        args={"pattern": pattern, "flags": flags, "exact": exact},
        retime=lambda limit: matches(pattern, flags=flags, exact=exact, timeout_s=min(limit, timeout_s)),
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
    quoted = _quote(expected)

    def score(run: AgentRun) -> Score:
        value = dice_similarity(run.output or "", expected, ignore_case)
        reason = f"bigram similarity {value:.2f} to {quoted}"
        if threshold is None:
            return Score("similarity", value=value, reason=reason)
        passed = value >= threshold
        return _verdict("similarity", passed, f"{reason}, {'at least' if passed else 'below'} {threshold:g}")

    return _check(
        "similarity",
        score,
        _NEEDS_OUTPUT,
        binary=threshold is not None,
        args={"expected": expected, "threshold": threshold, "ignore_case": ignore_case},
    )


def _calls(count: int) -> str:
    return f"{count} tool call{'' if count == 1 else 's'}"


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def called_tool(tool: str, *, times: int = 1) -> Check:
    """1 if calls named `tool` number at least `times` (whatever their state)."""

    def score(run: AgentRun) -> Score:
        count = 0
        for call in run.tool_calls:
            if call.name == tool:
                count += 1
        passed = count >= times
        return _verdict(
            "called_tool", passed, f"{tool} called {_times(count)}, wanted at least {_times(times)}"
        )

    return _check("called_tool", score, _NEEDS_TOOL_CALLS, args={"tool": tool, "times": times})


def did_not_call(tool: str) -> Check:
    """1 if no call is named `tool`."""

    def score(run: AgentRun) -> Score:
        count = 0
        for call in run.tool_calls:
            if call.name == tool:
                count += 1
        if count:
            return _verdict("did_not_call", False, f"{tool} called {_times(count)}, wanted never")
        return _verdict("did_not_call", True, f"{tool} not called")

    return _check("did_not_call", score, _NEEDS_TOOL_CALLS, args={"tool": tool})


def _names(calls: Sequence[ToolCall], limit: int = 8) -> str:
    names = [call.name for call in calls[:limit]]
    return (
        ", ".join(names) + (f", … ({len(calls)} in all)" if len(calls) > limit else "") if names else "none"
    )


def tool_order(order: Sequence[str]) -> Check:
    """1 if `order` appears in the call names as a subsequence (greedy, left to right)."""
    wanted = tuple(order)
    steps = " → ".join(wanted)

    def score(run: AgentRun) -> Score:
        position = 0
        for call in run.tool_calls:
            if position < len(wanted) and call.name == wanted[position]:
                position += 1
        if position == len(wanted):
            return _verdict("tool_order", True, f"calls follow {steps or 'the empty order'}")
        step = wanted[position]
        after = f" after {wanted[position - 1]}" if position else ""
        return _verdict(
            "tool_order",
            False,
            f"{step} (step {position + 1} of {len(wanted)}) not called{after}; calls: {_names(run.tool_calls)}",
        )

    return _check("tool_order", score, _NEEDS_TOOL_CALLS, args={"order": list(wanted)})


def max_tool_calls(max: int) -> Check:
    """1 if the number of calls is at most `max`."""
    limit = max

    def score(run: AgentRun) -> Score:
        count = len(run.tool_calls)
        return _verdict("max_tool_calls", count <= limit, f"{_calls(count)}, at most {limit} allowed")

    return _check("max_tool_calls", score, _NEEDS_TOOL_CALLS, args={"max": limit})


def used_no_tools() -> Check:
    """1 if there are no calls."""

    def score(run: AgentRun) -> Score:
        if not run.tool_calls:
            return _verdict("used_no_tools", True, "no tool calls")
        count = len(run.tool_calls)
        return _verdict("used_no_tools", False, f"{_calls(count)} ({_names(run.tool_calls)}), wanted none")

    return _check("used_no_tools", score, _NEEDS_TOOL_CALLS)


_FAILURE_WORDS = {"error": "failed", "incomplete": "did not finish", "result_error": "returned an error"}


def no_tool_errors() -> Check:
    """1 if no call is in state error, incomplete or result_error. A run without calls passes; a
    run whose trace cannot show a failure (`tool_errors` missing) is skipped."""

    def score(run: AgentRun) -> Score:
        for call in run.tool_calls:
            if call.state in _FAILED_STATES:
                what = f"{call.name} {_FAILURE_WORDS[call.state]}"
                detail = f": {call.error[:120]}" if call.error else ""
                others = sum(1 for other in run.tool_calls if other.state in _FAILED_STATES) - 1
                more = f" (and {others} more)" if others else ""
                return _verdict("no_tool_errors", False, what + detail + more)
        count = len(run.tool_calls)
        return _verdict("no_tool_errors", True, f"{_calls(count)}, none failed" if count else "no tool calls")

    return _check("no_tool_errors", score, _NEEDS_TOOL_ERRORS)
