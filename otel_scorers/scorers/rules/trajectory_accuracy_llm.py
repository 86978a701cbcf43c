"""trajectory_accuracy_llm: whether the agent's steps (its tool calls, in order) were the
necessary ones in a sensible order. Unlike Mastra, a flawless trajectory scores 1: the weighted
part (0.6 necessity + 0.3 order) is divided by 0.9 before the missing-steps penalty."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.rules.base import Ask, Reference, Task, ask_once, need_input
from otel_scorers.scorers.rules.tool_call_accuracy_llm import tool_calls_text


class StepEvaluation(BaseModel):
    step: str
    necessary: bool
    in_order: bool
    reason: str = ""


class TrajectoryReply(BaseModel):
    steps: list[StepEvaluation]
    missing_steps: list[str] = []
    extra_steps: list[str] = []
    reason: str = ""


def trajectory_value(reply: TrajectoryReply, normalise: bool = True) -> float:
    """The formula; `normalise=False` is Mastra's own (a flawless trajectory gets 0.9)."""
    if not reply.steps:
        if reply.missing_steps:
            return 0.0
        return 0.5 if reply.extra_steps else 1.0
    total = len(reply.steps)
    necessary = sum(1 for step in reply.steps if step.necessary) / total
    ordered = sum(1 for step in reply.steps if step.in_order) / total
    missing = len(reply.missing_steps) / (total + len(reply.missing_steps)) if reply.missing_steps else 0.0
    weighted = necessary * 0.6 + ordered * 0.3
    if normalise:
        weighted /= 0.9
    return max(0.0, min(1.0, weighted - missing * 0.1))


@dataclass(frozen=True, slots=True)
class TrajectoryAccuracyLLM:
    expected: Reference = field(default_factory=Reference)

    kind = "trajectory_accuracy_llm"
    version = "trajectory_accuracy_llm/1"
    shape = TrajectoryReply
    mastra_steps = 2
    needs = frozenset({"input"})
    higher_is_worse = False
    instructions = (
        "You judge the steps an AI agent took (its numbered tool calls) to handle the user's request. For "
        "each step say whether it was necessary and whether it came in a sensible order (`step` is its "
        "tool). List the steps that were needed but missing, and the steps that were extra. When an "
        "expected trajectory is given, judge against it."
    )
    reply_format = (
        '{"steps":[{"step":"...","necessary":true,"in_order":true,"reason":"..."}],'
        '"missing_steps":["..."],"extra_steps":["..."],"reason":"..."}'
    )

    def prepare(self, run: AgentRun) -> Task | Score:
        early = need_input(run, self.kind)
        if early is not None:
            return early
        data: list[tuple[str, str]] = [("request", run.input or ""), ("steps", tool_calls_text(run))]
        expected = self.expected.read(run)
        if expected is not None:
            data.append(("expected_trajectory", expected))
        if run.output is not None:
            data.append(("answer", run.output))
        return Task(tuple(data))

    def value(self, reply: TrajectoryReply, task: Task) -> tuple[float, dict[str, Any]]:
        details: dict[str, Any] = {
            "steps": [s.model_dump(exclude={"reason"}) for s in reply.steps],
            "missing_steps": reply.missing_steps,
            "extra_steps": reply.extra_steps,
            "mastra_value": trajectory_value(reply, normalise=False),
        }
        return trajectory_value(reply), details

    def reason(self, reply: TrajectoryReply) -> str:
        return reply.reason.strip()

    async def steps(self, ask: Ask[Any], task: Task) -> TrajectoryReply:
        return await ask_once(self, ask, task)
