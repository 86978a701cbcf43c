"""Scores to the agreement join: each scored result waits there for the labels people give the
same run (`otel_scorers.labels.agreement`)."""

from __future__ import annotations

from collections.abc import Sequence

from otel_scorers.labels.agreement import Agreement, JudgeScore
from otel_scorers.model import AgentRun, Score


def judge_scores(run: AgentRun, scores: Sequence[Score]) -> list[JudgeScore]:
    return [
        JudgeScore(
            score.scorer,
            run.trace_id,
            run.span_id,
            score.value,
            score.label,
            getattr(score, "evaluator_version", None) or "",
            score.sampling_probability or 1.0,
            run.conversation_id,
        )
        for score in scores
        if score.error is None
        and score.skipped is None
        and (score.value is not None or score.label is not None)
    ]


class AgreementOutput:
    def __init__(self, agreement: Agreement) -> None:
        self.agreement = agreement

    def emit(self, run: AgentRun, scores: Sequence[Score]) -> None:
        self.agreement.observe(judge_scores(run, scores))

    def flush(self) -> None:
        pass

    def behind(self) -> bool:
        return False
