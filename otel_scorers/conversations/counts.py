"""What became of conversations and their turns: `otel_scorers.conversations`, by outcome.

A conversation's scores go through the pipeline's `Emission` (`emit_conversation`), to every
output the run scores go to; this counts what the metrics cannot tell from the scores.
"""

from __future__ import annotations

from otel_scorers.metrics import OUTCOME, PipelineMetrics, Tally


class ConversationCounts:
    """`otel_scorers.conversations`: what became of conversations and their turns, by outcome
    (`scored`, `sampled_out`, `evicted`, `trimmed_turn`, `duplicate_turn`, `dropped_shutdown`...)."""

    def __init__(self, metrics: PipelineMetrics) -> None:
        self._tally = Tally(
            metrics.meter,
            "otel_scorers.conversations",
            "{item}",
            "Conversations and turns by outcome: closed (by end reason), sampled_out, evicted, trimmed_turn, dropped_shutdown.",
            (OUTCOME, "otel_scorers.conversation.ended_by"),
        )
        self.totals: dict[str, int] = {}

    def add(self, outcome: str, amount: int = 1, ended_by: str | None = None) -> None:
        self._tally.add(amount, outcome, ended_by)
        self.totals[outcome] = self.totals.get(outcome, 0) + amount
