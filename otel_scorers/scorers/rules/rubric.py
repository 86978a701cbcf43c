"""rubric: 1 when the answer satisfies every required criterion of a configured rubric, else 0.
Which criteria are required comes from the configuration, not from the judge's reply."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.rules.base import Ask, Task, ask_once, need_output
from otel_scorers.scorers.rules.replies import Ordinal


@dataclass(frozen=True, slots=True)
class Criterion:
    text: str
    required: bool = True


class CriterionVerdict(BaseModel):
    criterion: Ordinal
    satisfied: bool
    reason: str = ""


class RubricReply(BaseModel):
    criteria: list[CriterionVerdict]
    reason: str = ""


#: A list item's marker at the start of a line: `-`, `*`, `•`, `1.`, `1)`, then spaces.
_BULLET = re.compile(r"^(?:[-*•]|\d+[.)])\s+")


def as_criteria(
    criteria: str | Sequence[str | Mapping[str, Any] | Criterion],
) -> tuple[Criterion, ...]:
    """The criteria as given: a list of texts, `{criterion, required}` mappings or `Criterion`s;
    or one text, read as a list with one criterion per non-empty line, bullets and numbers
    stripped (so a one-line text is one criterion, never one per character)."""
    if isinstance(criteria, str):
        lines = (_BULLET.sub("", line.strip()).strip() for line in criteria.splitlines())
        return tuple(Criterion(line) for line in lines if line)
    found = []
    for entry in criteria:
        if isinstance(entry, Criterion):
            found.append(entry)
        elif isinstance(entry, str):
            found.append(Criterion(entry))
        else:
            found.append(Criterion(str(entry["criterion"]), bool(entry.get("required", True))))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class Rubric:
    criteria: tuple[Criterion, ...]

    kind = "rubric"
    shape = RubricReply
    mastra_steps = 1
    needs = frozenset({"output"})
    higher_is_worse = False
    instructions = "Does the answer to the request satisfy each numbered criterion?"
    reply_format = '{"criteria":[{"criterion":1,"satisfied":true}],"reason":"..."}'

    @property
    def version(self) -> str:
        return "rubric/2"

    def prepare(self, run: AgentRun) -> Task | Score:
        if not self.criteria:
            return Score(
                self.kind, value=1.0, reason="No criteria were configured.", details={"judge_calls": 0}
            )
        early = need_output(run, self.kind)
        if early is not None:
            return early
        numbered = tuple((f"criterion_{n}", c.text) for n, c in enumerate(self.criteria, 1))
        return Task((("request", run.input or ""), ("answer", run.output or ""), *numbered))

    def value(self, reply: RubricReply, task: Task) -> tuple[float, dict[str, Any]]:
        verdicts: dict[int, bool] = {}
        for verdict in reply.criteria:
            verdicts.setdefault(verdict.criterion, verdict.satisfied)
        satisfied = [verdicts.get(n, False) for n in range(1, len(self.criteria) + 1)]
        required = [n for n, c in enumerate(self.criteria) if c.required] or list(range(len(self.criteria)))
        details = {
            "criteria": [
                {"criterion": c.text, "required": c.required, "satisfied": s}
                for c, s in zip(self.criteria, satisfied, strict=True)
            ]
        }
        return (1.0 if all(satisfied[n] for n in required) else 0.0), details

    def reason(self, reply: RubricReply) -> str:
        return reply.reason.strip()

    async def steps(self, ask: Ask[Any], task: Task) -> RubricReply:
        return await ask_once(self, ask, task)
