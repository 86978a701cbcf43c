"""summarization: a summary must be both faithful to its source and cover it; the lower of the
two shares is the score."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.rules.base import Ask, Reference, Task, need_output, skipped, zero


class SummaryClaim(BaseModel):
    claim: str
    supported: bool
    reason: str = ""


class Coverage(BaseModel):
    question: str
    answered: bool


class SummaryReply(BaseModel):
    claims: list[SummaryClaim]
    questions: list[Coverage]
    reason: str = ""


class SourceJudgement(BaseModel):
    claims: list[SummaryClaim]
    questions: list[str]


class Answered(BaseModel):
    answered: bool


class CoverageReply(BaseModel):
    answers: list[Answered]


@dataclass(frozen=True, slots=True)
class Summarization:
    source: Reference
    max_questions: int = 10

    kind = "summarization"
    version = "summarization/1"
    shape = SummaryReply
    mastra_steps = 3
    needs = frozenset({"output"})
    higher_is_worse = False
    reply_format = (
        '{"claims":[{"claim":"...","supported":true}],"questions":[{"question":"...","answered":true}],'
        '"reason":"..."}'
    )

    @property
    def instructions(self) -> str:
        return (
            "You judge a summary of a source text. 1. List the summary's claims; for each, supported = the "
            "source states or directly implies it. 2. Write up to "
            f"{self.max_questions} closed questions on the source's key facts; for each, answered = the "
            "summary alone (not the source) answers it."
        )

    def prepare(self, run: AgentRun) -> Task | Score:
        early = need_output(run, self.kind)
        if early is not None:
            return early
        source = self.source.read(run) if (self.source.text or self.source.path) else run.input
        if source is None or not source.strip():
            return skipped(self.kind, "no source text: pass source or source_from, or the run's input")
        if not (run.output or "").strip():
            return zero(self.kind, "The summary is empty.")
        return Task((("source", source), ("summary", run.output or "")))

    def value(self, reply: SummaryReply, task: Task) -> tuple[float, dict[str, Any]]:
        questions = reply.questions[: self.max_questions]
        supported = sum(1 for claim in reply.claims if claim.supported)
        answered = sum(1 for question in questions if question.answered)
        details: dict[str, Any] = {
            "unsupported_claims": [c.claim for c in reply.claims if not c.supported],
            "unanswered_questions": [q.question for q in questions if not q.answered],
            "claims": len(reply.claims),
            "questions": len(questions),
        }
        if not reply.claims or not questions:
            return 0.0, details
        alignment, coverage = supported / len(reply.claims), answered / len(questions)
        details.update(alignment=alignment, coverage=coverage)
        return min(alignment, coverage), details

    def reason(self, reply: SummaryReply) -> str:
        return reply.reason.strip()

    async def steps(self, ask: Ask[Any], task: Task) -> SummaryReply:
        judged: SourceJudgement = await ask(
            "You judge a summary against its source. List the summary's claims, each with supported = the "
            f"source states or implies it; and write up to {self.max_questions} closed questions on the "
            "source's key facts.",
            '{"claims":[{"claim":"...","supported":true}],"questions":["..."]}',
            task.data,
            SourceJudgement,
        )
        questions = judged.questions[: self.max_questions]
        if not questions:
            return SummaryReply(claims=judged.claims, questions=[])
        summary = tuple((tag, text) for tag, text in task.data if tag == "summary")
        numbered = tuple((f"question_{n}", q) for n, q in enumerate(questions, 1))
        # the coverage call never sees the source, so nothing left out can be answered from it
        covered: CoverageReply = await ask(
            "Using only the summary, say for each numbered question, in order, whether the summary answers it.",
            '{"answers":[{"answered":true}]}',
            (*summary, *numbered),
            CoverageReply,
        )
        coverage = [
            Coverage(question=q, answered=covered.answers[n].answered if n < len(covered.answers) else False)
            for n, q in enumerate(questions)
        ]
        return SummaryReply(claims=judged.claims, questions=coverage)
