"""context_precision: whether the relevant context items come first (mean average precision)."""

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
from otel_scorers.scorers.rules.replies import Ordinal, YesNo, choices


class ItemVerdict(BaseModel):
    context: Ordinal
    verdict: YesNo
    reason: str = ""


class PrecisionReply(BaseModel):
    verdicts: list[ItemVerdict]
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ContextPrecision:
    kind = "context_precision"
    version = "context_precision/1"
    shape = PrecisionReply
    mastra_steps = 2
    needs = frozenset({"input", "output"})
    higher_is_worse = False
    instructions = (
        "You judge, for each numbered context block, whether it was useful for reaching the answer to the "
        "question: yes = relevant to it, no = not. One verdict per block, `context` being its number."
    )
    reply_format = (
        f'{{"verdicts":[{{"context":1,"verdict":"{choices(YesNo)}","reason":"..."}}],"reason":"..."}}'
    )

    def prepare(self, run: AgentRun) -> Task | Score:
        return question_answer_context(self.kind, run)

    def value(self, reply: PrecisionReply, task: Task) -> tuple[float, dict[str, Any]]:
        items = int(task.facts["items"])
        by_item: dict[int, str] = {}
        for verdict in reply.verdicts:
            if 1 <= verdict.context <= items and verdict.context not in by_item:
                by_item[verdict.context] = verdict.verdict
        ordered = [by_item.get(n, "no") for n in range(1, items + 1)]
        details: dict[str, Any] = {"verdicts": ordered}
        if len(by_item) < items:
            details["missing_verdicts"] = items - len(by_item)
        relevant, total = 0, 0.0
        for position, read in enumerate(ordered, 1):
            if read == "yes":
                relevant += 1
                total += relevant / position
        return (total / relevant if relevant else 0.0), details

    def reason(self, reply: PrecisionReply) -> str:
        return reply.reason.strip()

    async def steps(self, ask: Ask[Any], task: Task) -> PrecisionReply:
        return await ask_once(self, ask, task)
