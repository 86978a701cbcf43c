"""faithfulness: the share of the answer's claims that its context supports (higher is better)."""

from __future__ import annotations

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.rules.base import (
    GROUNDING,
    NO_CONTEXT,
    Task,
    context_blocks,
    need_output,
    skipped,
    zero,
)
from otel_scorers.scorers.rules.claims import UnitsRule
from otel_scorers.scorers.rules.replies import YesUnsureNo


def grounded_answer(kind: str, run: AgentRun) -> Task | Score:
    """The answer and the run's grounding context, or why there is nothing to judge."""
    early = need_output(run, kind)
    if early is not None:
        return early
    blocks = context_blocks(run.context, GROUNDING)
    if not blocks:
        return skipped(kind, NO_CONTEXT)
    if not (run.output or "").strip():
        return zero(kind, "The answer is empty: it makes no claims.")
    return Task((("answer", run.output or ""), *blocks), {"source_tag": "answer"})


FAITHFULNESS = UnitsRule(
    kind="faithfulness",
    version="faithfulness/1",
    unit="claim",
    extract="List the factual claims the answer makes, each able to stand alone.",
    judge=(
        "Judge each claim against the context blocks only, never your own knowledge: yes = the context "
        "states or directly implies it; no = the context contradicts it; unsure = the context does not say."
    ),
    verdict=YesUnsureNo,
    prepare_run=lambda run: grounded_answer("faithfulness", run),
    needs=frozenset({"output"}),
)
