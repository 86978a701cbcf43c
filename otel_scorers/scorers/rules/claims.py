"""The rule shared by the scorers that split a text into units (claims, opinions, statements)
and count the verdicts of one kind: faithfulness, hallucination, bias, toxicity, context_recall.

One call returns the units with their verdicts, so the two counts agree by construction.
Mastra's flow (`steps`): extract the units, judge them, write the reason; there a verdict the
judge left out counts as `no` and is recorded in the details.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.judge import Data, JudgeError
from otel_scorers.scorers.rules.base import Ask, Task
from otel_scorers.scorers.rules.replies import allowed, choices

#: A rule's verdict type (`YesNo`, `YesUnsureNo`): the replies' models are made for it.
V = TypeVar("V", bound=str)


class _ForVerdicts(BaseModel):
    @classmethod
    def model_parametrized_name(cls, params: tuple[Any, ...]) -> str:
        # `UnitsReply_yes_no`, not the annotated type's repr, in the schema the judge is given
        return "_".join([cls.__name__, *allowed(params[0])])


class Unit(_ForVerdicts, Generic[V]):
    text: str
    verdict: V
    reason: str = ""


class UnitsReply(_ForVerdicts, Generic[V]):
    units: list[Unit[V]]
    reason: str = ""
    # steps mode: units the judge gave no verdict for (read as "no"); not the judge's to say
    missing_verdicts: SkipJsonSchema[int] = Field(0, ge=0)


class SomeUnitsReply(UnitsReply[V], Generic[V]):
    """A reply that must judge at least one unit (toxicity: no verdicts is no clean bill), said
    in its schema too, so that a grammar-bound local model cannot answer with none."""

    units: list[Unit[V]] = Field(min_length=1)


class Extracted(BaseModel):
    units: list[str]


class Verdict(_ForVerdicts, Generic[V]):
    verdict: V
    reason: str = ""


class Verdicts(_ForVerdicts, Generic[V]):
    verdicts: list[Verdict[V]]


@functools.cache
def _for(model: Any, verdict: Any) -> Any:
    """`model[verdict]`, made once per verdict type."""
    return model[verdict]


#: What a claims rule reads from a run: the data blocks and what they are, or a Score.
Prepare = Callable[[AgentRun], "Task | Score"]


@dataclass(frozen=True, slots=True)
class UnitsRule:
    kind: str
    version: str
    unit: str  # "claim", "opinion", "statement"
    extract: str  # how to split the text into units
    judge: str  # how to judge each unit
    verdict: Any  # the verdict type (replies.YesNo, replies.YesUnsureNo), the counted one first
    prepare_run: Prepare
    needs: frozenset[str]
    higher_is_worse: bool = False
    mastra_steps: int = 3  # extract, judge, reason (toxicity: judge, reason)
    no_units_is_invalid: bool = False  # toxicity: a reply without verdicts is not a clean bill

    @property
    def shape(self) -> type[UnitsReply[Any]]:
        shape: type[UnitsReply[Any]] = _for(
            SomeUnitsReply if self.no_units_is_invalid else UnitsReply, self.verdict
        )
        return shape

    @property
    def counted(self) -> str:
        return allowed(self.verdict)[0]

    @property
    def instructions(self) -> str:
        allowed = choices(self.verdict)
        return (
            f"1. {self.extract} Give each {self.unit} as `text`.\n"
            f"2. {self.judge} Verdict, one of {allowed}, and a short reason.\n"
            f"Also a one-sentence `reason` summing up. ({self.unit} verdicts: {allowed})"
        )

    @property
    def reply_format(self) -> str:
        allowed = choices(self.verdict)
        return f'{{"units":[{{"text":"...","verdict":"{allowed}","reason":"..."}}],"reason":"..."}}'

    def prepare(self, run: AgentRun) -> Task | Score:
        return self.prepare_run(run)

    def value(self, reply: UnitsReply[Any], task: Task) -> tuple[float, dict[str, Any]]:
        read = [unit.verdict for unit in reply.units]
        details: dict[str, Any] = {
            f"{self.unit}s": [
                {"text": unit.text, "verdict": unit.verdict, "reason": unit.reason} for unit in reply.units
            ]
        }
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

    def reason(self, reply: UnitsReply[Any]) -> str:
        return reply.reason.strip()

    async def steps(self, ask: Ask[Any], task: Task) -> UnitsReply[Any]:
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
            return self.shape(units=[], reason=f"The judge found no {self.unit}s.")
        numbered = tuple((f"{self.unit}_{n}", text) for n, text in enumerate(texts, 1))
        allowed = choices(self.verdict)
        if texts:
            judged: Verdicts[Any] = await ask(
                f"{self.judge} One verdict per numbered {self.unit}, in order.",
                f'{{"verdicts":[{{"verdict":"{allowed}","reason":"..."}}]}}',
                (*data, *numbered),
                _for(Verdicts, self.verdict),
            )
            verdicts = judged.verdicts
            units = [
                {"text": text, "verdict": verdicts[n].verdict, "reason": verdicts[n].reason}
                if n < len(verdicts)
                else {"text": text, "verdict": "no", "reason": "no verdict returned"}
                for n, text in enumerate(texts)
            ]
            return self.shape.model_validate(
                {"units": units, "missing_verdicts": max(0, len(texts) - len(verdicts))}
            )
        # toxicity's two calls: the judge splits and judges in one, then the reason
        one: UnitsReply[Any] = await ask(self.instructions, self.reply_format, data, self.shape)
        return one
