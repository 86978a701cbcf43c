"""prompt_alignment: how well the answer does what the prompt asked, from four sub-scores."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.rules.base import Ask, Task, ask_once, need_input, need_output, skipped, zero
from otel_scorers.scorers.rules.replies import UnitInterval

WEIGHTS = {
    "user": (0.4, 0.3, 0.2, 0.1),
    "system": (0.35, 0.35, 0.15, 0.15),
}


class AlignmentReply(BaseModel):
    intent: UnitInterval
    requirements: UnitInterval
    completeness: UnitInterval
    appropriateness: UnitInterval
    reason: str = ""


@dataclass(frozen=True, slots=True)
class PromptAlignment:
    mode: Literal["user", "system"] = "user"

    kind = "prompt_alignment"
    shape = AlignmentReply
    mastra_steps = 2
    needs = frozenset({"input", "output"})
    higher_is_worse = False
    reply_format = '{"intent":0.0,"requirements":0.0,"completeness":0.0,"appropriateness":0.0,"reason":"..."}'

    @property
    def version(self) -> str:
        return f"prompt_alignment/1/{self.mode}"

    @property
    def instructions(self) -> str:
        prompt = "the user's request" if self.mode == "user" else "the system instructions"
        return (
            f"You rate how well an AI agent's answer follows {prompt}. Give four sub-scores from 0 to 1: "
            "intent (it addresses the real goal), requirements (it meets each explicit requirement and "
            "constraint: the share met), completeness (nothing asked for is left out), appropriateness "
            "(format, tone and length suit the request)."
        )

    def prepare(self, run: AgentRun) -> Task | Score:
        early = need_output(run, self.kind) or need_input(run, self.kind)
        if early is not None:
            return early
        if not (run.output or "").strip():
            return zero(self.kind, "The answer is empty: it does nothing the prompt asked.")
        data: list[tuple[str, str]] = [("request", run.input or "")]
        if self.mode == "system":
            instructions = [item.text for item in run.context if item.kind == "system_instructions"]
            if not instructions:
                return skipped(self.kind, "the trace carried no system instructions")
            data = [("system_instructions", "\n".join(instructions)), *data]
        return Task((*data, ("answer", run.output or "")))

    def value(self, reply: AlignmentReply, task: Task) -> tuple[float, dict[str, Any]]:
        parts = [reply.intent, reply.requirements, reply.completeness, reply.appropriateness]
        weights = WEIGHTS[self.mode]
        details = dict(zip(("intent", "requirements", "completeness", "appropriateness"), parts, strict=True))
        return sum(w * p for w, p in zip(weights, parts, strict=True)), {
            "sub_scores": details,
            "mode": self.mode,
        }

    def reason(self, reply: AlignmentReply) -> str:
        return reply.reason.strip()

    async def steps(self, ask: Ask[Any], task: Task) -> AlignmentReply:
        return await ask_once(self, ask, task)
