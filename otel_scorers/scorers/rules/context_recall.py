"""context_recall: the share of the reference answer's claims that the run's context supports."""

from __future__ import annotations

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.rules.base import GROUNDING, NO_CONTEXT, Reference, Task, context_blocks, skipped
from otel_scorers.scorers.rules.claims import UnitsRule
from otel_scorers.scorers.rules.replies import YesNo


def context_recall_rule(reference: Reference) -> UnitsRule:
    def prepare(run: AgentRun) -> Task | Score:
        expected = reference.read(run)
        if expected is None:
            return skipped("context_recall", reference.missing_reason("reference"))
        blocks = context_blocks(run.context, GROUNDING)
        if not blocks:
            return skipped("context_recall", NO_CONTEXT)
        return Task((("reference", expected), *blocks), {"source_tag": "reference"})

    return UnitsRule(
        kind="context_recall",
        version="context_recall/1",
        unit="claim",
        extract="List the claims the reference answer makes, each able to stand alone.",
        judge=(
            "For each claim of the reference say whether the context blocks contain what it needs: yes = it "
            "can be attributed to the context; no = it cannot."
        ),
        verdict=YesNo,
        prepare_run=prepare,
        needs=frozenset(),
    )
