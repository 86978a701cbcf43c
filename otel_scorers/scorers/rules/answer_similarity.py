"""answer_similarity: how much of a reference answer the answer carries (Mastra's weights)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.rules.base import Ask, Reference, Task, need_output, skipped, zero
from otel_scorers.scorers.rules.replies import MatchKind, choices


class Match(BaseModel):
    unit: str
    match: MatchKind
    reason: str = ""


class SimilarityReply(BaseModel):
    matches: list[Match]
    contradictions: list[str] = []
    extra: list[str] = []
    reason: str = ""


class Units(BaseModel):
    answer_units: list[str]
    reference_units: list[str]


@dataclass(frozen=True, slots=True)
class AnswerSimilarity:
    reference: Reference
    exact_bonus: float = 0.2
    semantic_weight: float = 0.8
    missing_penalty: float = 0.15
    contradiction_penalty: float = 1.0
    extra_penalty: float = 0.05
    max_extra_penalty: float = 0.2

    kind = "answer_similarity"
    version = "answer_similarity/1"
    shape = SimilarityReply
    mastra_steps = 3
    needs = frozenset({"output"})
    higher_is_worse = False
    instructions = (
        "You compare an AI agent's answer with a reference answer. Split the reference into its units of "
        "information. For each reference unit say how the answer carries it: exact (same fact, same "
        "wording or numbers), semantic (same meaning, other words), partial (part of it), missing (absent). "
        "List the answer's statements that contradict the reference, and the answer's units the "
        "reference does not have (extra)."
    )
    reply_format = (
        f'{{"matches":[{{"unit":"...","match":"{choices(MatchKind)}","reason":"..."}}],'
        '"contradictions":["..."],"extra":["..."],"reason":"..."}'
    )

    def prepare(self, run: AgentRun) -> Task | Score:
        early = need_output(run, self.kind)
        if early is not None:
            return early
        expected = self.reference.read(run)
        if expected is None:
            return skipped(self.kind, self.reference.missing_reason("reference"))
        if not (run.output or "").strip():
            return zero(self.kind, "The answer is empty: it carries nothing of the reference.")
        return Task((("answer", run.output or ""), ("reference", expected)))

    def value(self, reply: SimilarityReply, task: Task) -> tuple[float, dict[str, Any]]:
        read = [match.match for match in reply.matches]
        details: dict[str, Any] = {
            "matches": [{"unit": m.unit, "match": m.match} for m in reply.matches],
            "contradictions": reply.contradictions,
            "extra": reply.extra,
        }
        if not read:
            return 0.0, details
        weights: dict[MatchKind, float] = {
            "exact": 1 + self.exact_bonus,
            "semantic": self.semantic_weight,
            "partial": self.semantic_weight * 0.5,
            "missing": -self.missing_penalty,
        }
        score = sum(weights[match] for match in read) / (len(read) * (1 + self.exact_bonus))
        score -= len(reply.contradictions) * self.contradiction_penalty
        score -= min(len(reply.extra) * self.extra_penalty, self.max_extra_penalty)
        return max(0.0, min(1.0, score)), details

    def reason(self, reply: SimilarityReply) -> str:
        return reply.reason.strip()

    async def steps(self, ask: Ask[Any], task: Task) -> SimilarityReply:
        units: Units = await ask(
            "Split the answer and the reference answer each into units of information. Do not judge them.",
            '{"answer_units":["..."],"reference_units":["..."]}',
            task.data,
            Units,
        )
        numbered = (
            *(("answer_unit", text) for text in units.answer_units),
            *(("reference_unit", text) for text in units.reference_units),
        )
        reply: SimilarityReply = await ask(
            "You compare the answer's units with the reference's units. For each reference unit, in order, "
            "say how the answer carries it: exact, semantic, partial or missing. List contradictions and the "
            "answer's extra units.",
            self.reply_format,
            numbered,
            SimilarityReply,
        )
        return reply
