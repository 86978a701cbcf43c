"""Scores to the agreement join: each scored result waits there for the labels people give the
same run or conversation (`otel_scorers.labels.agreement`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Protocol

from otel_scorers.conversation_turns import Conversation
from otel_scorers.emission.attributes import conversation_run
from otel_scorers.labels.join_records import JudgeScore
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


class ScoreJoin(Protocol):
    """Where the judge's side of the join goes: an `Agreement`, or what carries the scores to
    the process that holds it (a sidecar's scoring process to its receiving one)."""

    def add_scores(self, scores: Iterable[JudgeScore]) -> None: ...


class AgreementOutput:
    """An output of the pipeline's `Emission`: the one entrance to the agreement join, for run
    and conversation scores alike, in every door and command (a sidecar's scoring process hands
    them to its receiving one through a `ScoreJoin` that carries them)."""

    def __init__(self, agreement: ScoreJoin) -> None:
        self.agreement = agreement

    def emit(self, run: AgentRun, scores: Sequence[Score]) -> None:
        self.agreement.add_scores(judge_scores(run, scores))

    def emit_conversation(self, conversation: Conversation, scores: Sequence[Score]) -> None:
        # A conversation's scores stand as those of its last run, with the conversation's id.
        run = replace(conversation_run(conversation), conversation_id=conversation.id)
        self.agreement.add_scores(judge_scores(run, scores))

    def flush(self) -> None:
        pass

    def behind(self) -> bool:
        return False
