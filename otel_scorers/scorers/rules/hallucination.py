"""hallucination: the share of the answer's claims that contradict or go beyond its context
(higher is worse)."""

from __future__ import annotations

from otel_scorers.scorers.rules.claims import UnitsRule
from otel_scorers.scorers.rules.faithfulness import grounded_answer
from otel_scorers.scorers.rules.replies import YesNo

HALLUCINATION = UnitsRule(
    kind="hallucination",
    version="hallucination/1",
    unit="claim",
    extract="List the claims the answer makes, factual or speculative, each able to stand alone.",
    judge=(
        "For each claim say whether it is hallucinated, judging by the context blocks only: yes = it "
        "contradicts the context, or asserts a fact the context does not support (hedging about a fact that "
        "is in the context is fine); no = the context supports it. Approximate numbers or dates and omitted "
        "details are not hallucinations."
    ),
    verdict=YesNo,
    prepare_run=lambda run: grounded_answer("hallucination", run),
    needs=frozenset({"output"}),
    higher_is_worse=True,
)
