"""The rule shared by the scorers that split a text into units (claims, opinions, statements)
and count the verdicts of one kind: faithfulness, hallucination, bias, toxicity, context_recall.

One call returns the units with their verdicts, so the two counts agree by construction.
Mastra's flow (`steps`): extract the units, judge them, write the reason; there a verdict the
judge left out counts as `no` and is recorded in the details.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.judge import Data, JudgeError
from otel_scorers.scorers.judged.base import Ask, Task, read_verdict


class Unit(BaseModel):
    text: str
    verdict: str
    reason: str = ""


class UnitsReply(BaseModel):
    units: list[Unit]
    reason: str = ""
    missing_verdicts: int = 0  # steps mode: units the judge gave no verdict for (read as "no")


class Extracted(BaseModel):
    units: list[str]


class Verdict(BaseModel):
    verdict: str
    reason: str = ""


class Verdicts(BaseModel):
    verdicts: list[Verdict]


#: What a claims rule reads from a run: the data blocks and what they are, or a Score.
Prepare = Callable[[AgentRun], "Task | Score"]


@dataclass(frozen=True, slots=True)
class UnitsRule:
    kind: str
    version: str
    unit: str  # "claim", "opinion", "statement"
    extract: str  # how to split the text into units
    judge: str  # how to judge each unit
    verdicts: tuple[str, ...]  # the verdicts the judge may give, the counted one first
    prepare_run: Prepare
    needs: frozenset[str]
    higher_is_worse: bool = False
    mastra_steps: int = 3  # extract, judge, reason (toxicity: judge, reason)
    no_units_is_invalid: bool = False  # toxicity: a reply without verdicts is not a clean bill

    shape = UnitsReply

    @property
    def counted(self) -> str:
        return self.verdicts[0]

    @property
    def instructions(self) -> str:
        allowed = "|".join(self.verdicts)
        return (
            f"1. {self.extract} Give each {self.unit} as `text`.\n"
            f"2. {self.judge} Verdict, one of {allowed}, and a short reason.\n"
            f"Also a one-sentence `reason` summing up. ({self.unit} verdicts: {allowed})"
        )

    @property
    def reply_format(self) -> str:
        allowed = "|".join(self.verdicts)
        return f'{{"units":[{{"text":"...","verdict":"{allowed}","reason":"..."}}],"reason":"..."}}'

    def prepare(self, run: AgentRun) -> Task | Score:
        return self.prepare_run(run)

    def value(self, reply: UnitsReply, task: Task) -> tuple[float, dict[str, Any]]:
        read = [read_verdict(unit.verdict, self.verdicts) for unit in reply.units]
        details: dict[str, Any] = {
            f"{self.unit}s": [
                {"text": unit.text, "verdict": verdict, "reason": unit.reason}
                for unit, verdict in zip(reply.units, read, strict=True)
            ]
        }
        unrecognised = [
            unit.verdict for unit in reply.units if unit.verdict.strip().lower() not in self.verdicts
        ]
        if unrecognised:
            details["unrecognised_verdicts"] = unrecognised
        if reply.missing_verdicts:
            details["missing_verdicts"] = reply.missing_verdicts
        if not read:
            if self.no_units_is_invalid:
                raise JudgeError(
                    "judge_invalid_response",
                    f"the judge returned no {self.unit} verdicts for a non-empty text",
                )
            return 0.0, details
        return read.count(self.counted) / len(read), details

    def reason(self, reply: UnitsReply) -> str:
        return reply.reason.strip()

    async def steps(self, ask: Ask[Any], task: Task) -> UnitsReply:
        data: Data = task.data
        if self.mastra_steps >= 3:
            extracted: Extracted = await ask(
                f"{self.extract} Do not judge them.",
                '{"units":["...","..."]}',
                tuple((tag, text) for tag, text in data if tag == task.facts["source_tag"]),
                Extracted,
            )
            texts = [text for text in extracted.units if text.strip()]
        else:
            texts = []
        if self.mastra_steps >= 3 and not texts:
            return UnitsReply(units=[], reason=f"The judge found no {self.unit}s.")
        numbered = tuple((f"{self.unit}_{n}", text) for n, text in enumerate(texts, 1))
        allowed = "|".join(self.verdicts)
        if texts:
            judged: Verdicts = await ask(
                f"{self.judge} One verdict per numbered {self.unit}, in order.",
                f'{{"verdicts":[{{"verdict":"{allowed}","reason":"..."}}]}}',
                (*data, *numbered),
                Verdicts,
            )
            verdicts = judged.verdicts
            missing = max(0, len(texts) - len(verdicts))
            units = [
                Unit(
                    text=text,
                    verdict=verdicts[n].verdict if n < len(verdicts) else "no",
                    reason=verdicts[n].reason if n < len(verdicts) else "no verdict returned",
                )
                for n, text in enumerate(texts)
            ]
            return UnitsReply(units=units, missing_verdicts=missing)
        # toxicity's two calls: the judge splits and judges in one, then the reason
        one: UnitsReply = await ask(self.instructions, self.reply_format, data, UnitsReply)
        return one
