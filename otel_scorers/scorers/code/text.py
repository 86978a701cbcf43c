"""`textual_difference` and `content_similarity`: how much of the input the output repeats."""

from __future__ import annotations

import re

from rapidfuzz.distance import LCSseq

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.checks import Check, dice_similarity

_NEEDS_BOTH = frozenset({"input", "output"})
_WHITESPACE_RUN = re.compile(r"\s+")


def lcs_ratio(first: str, second: str) -> float:
    """2·LCS/(len + len) of code points; 1 for equal texts, 0 when one is empty. rapidfuzz's
    bit-parallel LCS keeps 20,000-character texts in milliseconds (a full table takes seconds)."""
    if first == second:
        return 1.0
    if not first or not second:
        return 0.0
    return 2.0 * LCSseq.similarity(first, second) / (len(first) + len(second))


def textual_difference() -> Check:
    """Mastra's textual difference: the LCS ratio of input and output (1 = the same text)."""

    def score(run: AgentRun) -> Score:
        first, second = run.input or "", run.output or ""
        value = lcs_ratio(first, second)
        if first == second:
            reason = "output is the input unchanged"
        elif not first or not second:
            reason = f"{'input' if not first else 'output'} is empty"
        else:
            common = round(value * (len(first) + len(second)) / 2)
            reason = f"{common} characters in common, in order, of {len(first)} in the input and {len(second)} in the output"
        return Score("textual_difference", value=value, reason=reason)

    return Check("textual_difference", score, _NEEDS_BOTH, binary=False)


def content_similarity(*, ignore_case: bool = True, ignore_whitespace: bool = True) -> Check:
    """Bigram Dice coefficient of input and output (the quick check `similarity`'s), after
    lower-casing and collapsing whitespace runs as asked."""

    def prepare(text: str) -> str:
        if ignore_case:
            text = text.lower()
        if ignore_whitespace:
            text = _WHITESPACE_RUN.sub(" ", text).strip()
        return text

    def score(run: AgentRun) -> Score:
        value = dice_similarity(prepare(run.input or ""), prepare(run.output or ""), ignore_case=False)
        return Score(
            "content_similarity",
            value=value,
            reason=f"input and output share {value:.0%} of their character pairs",
        )

    return Check(
        "content_similarity",
        score,
        _NEEDS_BOTH,
        binary=False,
        args={"ignore_case": ignore_case, "ignore_whitespace": ignore_whitespace},
    )
