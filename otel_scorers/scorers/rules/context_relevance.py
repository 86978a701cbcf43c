"""context_relevance: how relevant the run's context was to the question, and whether the
answer used what mattered (Mastra's weights and penalties)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.rules.base import (
    Ask,
    Task,
    ask_once,
    question_answer_context,
)
from otel_scorers.scorers.rules.replies import Ordinal, Relevance, choices

LEVELS: dict[Relevance, float] = {"high": 1.0, "medium": 0.7, "low": 0.3, "none": 0.0}


class ItemRelevance(BaseModel):
    context: Ordinal
    relevance: Relevance
    used: bool = False
    reason: str = ""


class RelevanceReply(BaseModel):
    items: list[ItemRelevance]
    missing: list[str] = []
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ContextRelevance:
    unused_high_penalty: float = 0.1
    missing_penalty: float = 0.15
    max_missing_penalty: float = 0.5

    kind = "context_relevance"
    version = "context_relevance/1"
    shape = RelevanceReply
    mastra_steps = 2
    needs = frozenset({"input", "output"})
    higher_is_worse = False
    instructions = (
        "You judge the context an AI agent had for a question. For each numbered context block give its "
        "relevance to the question (high = answers or directly supports it, medium = useful background, "
        "low = tangential, none = unrelated) and whether the answer used it. Then list what context was "
        "missing that a good answer needed (empty if none)."
    )
    reply_format = (
        f'{{"items":[{{"context":1,"relevance":"{choices(Relevance)}","used":true,"reason":"..."}}],'
        '"missing":["..."],"reason":"..."}'
    )

    def prepare(self, run: AgentRun) -> Task | Score:
        return question_answer_context(self.kind, run)

    def value(self, reply: RelevanceReply, task: Task) -> tuple[float, dict[str, Any]]:
        items = int(task.facts["items"])
        by_item: dict[int, ItemRelevance] = {}
        for item in reply.items:
            if 1 <= item.context <= items and item.context not in by_item:
                by_item[item.context] = item
        levels: list[Relevance] = []
        unused_high = 0
        for n in range(1, items + 1):
            judged = by_item.get(n)
            level: Relevance = judged.relevance if judged is not None else "none"
            levels.append(level)
            if level == "high" and judged is not None and not judged.used:
                unused_high += 1
        details: dict[str, Any] = {"relevance": levels, "unused_high": unused_high, "missing": reply.missing}
        if len(by_item) < items:
            details["missing_verdicts"] = items - len(by_item)
        base = sum(LEVELS[level] for level in levels) / items
        penalty = unused_high * self.unused_high_penalty
        penalty += min(len(reply.missing) * self.missing_penalty, self.max_missing_penalty)
        return max(0.0, base - penalty), details

    def reason(self, reply: RelevanceReply) -> str:
        return reply.reason.strip()

    async def steps(self, ask: Ask[Any], task: Task) -> RelevanceReply:
        return await ask_once(self, ask, task)
