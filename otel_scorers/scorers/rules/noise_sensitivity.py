"""noise_sensitivity: how well the answer held up against noise in its input, compared with a
noise-free baseline answer (Mastra's impact weights and penalties)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.rules.base import Ask, Reference, Task, ask_once, need_input, need_output, skipped
from otel_scorers.scorers.rules.replies import Impact, UnitInterval, choices

IMPACTS: dict[Impact, float] = {
    "none": 1.0,
    "minimal": 0.85,
    "moderate": 0.6,
    "significant": 0.3,
    "severe": 0.1,
}


class Dimension(BaseModel):
    dimension: str
    impact: Impact
    reason: str = ""


class NoiseReply(BaseModel):
    robustness: UnitInterval
    dimensions: list[Dimension] = []
    major_issues: list[str] = []
    reason: str = ""


@dataclass(frozen=True, slots=True)
class NoiseSensitivity:
    baseline: Reference
    discrepancy: float = 0.2
    major_issue_penalty: float = 0.1
    max_major_issue_penalty: float = 0.3

    kind = "noise_sensitivity"
    version = "noise_sensitivity/1"
    shape = NoiseReply
    mastra_steps = 2
    needs = frozenset({"input", "output"})
    higher_is_worse = False
    instructions = (
        "The question may hold noise: irrelevant, distracting or misleading text. Compare the answer given "
        "to the noisy question with the baseline answer given without noise. Rate the answer's robustness "
        "from 0 (the noise ruined it) to 1 (unaffected); for each of the dimensions content accuracy, "
        "completeness, relevance, consistency and hallucination resistance give the noise's impact (none, "
        "minimal, moderate, significant, severe); list the major issues the noise caused (empty if none)."
    )
    reply_format = (
        f'{{"robustness":0.0,"dimensions":[{{"dimension":"...","impact":"{choices(Impact)}"}}],'
        '"major_issues":["..."],"reason":"..."}'
    )

    def prepare(self, run: AgentRun) -> Task | Score:
        early = need_input(run, self.kind) or need_output(run, self.kind)
        if early is not None:
            return early
        baseline = self.baseline.read(run)
        if baseline is None:
            return skipped(self.kind, self.baseline.missing_reason("baseline"))
        return Task(
            (("question", run.input or ""), ("baseline_answer", baseline), ("answer", run.output or ""))
        )

    def value(self, reply: NoiseReply, task: Task) -> tuple[float, dict[str, Any]]:
        score = reply.robustness
        impacts = [d.impact for d in reply.dimensions]
        details: dict[str, Any] = {
            "robustness": reply.robustness,
            "impacts": impacts,
            "major_issues": reply.major_issues,
        }
        if impacts:
            calculated = sum(IMPACTS[impact] for impact in impacts) / len(impacts)
            details["calculated"] = calculated
            if abs(score - calculated) > self.discrepancy:
                score = min(score, calculated)
        score -= min(len(reply.major_issues) * self.major_issue_penalty, self.max_major_issue_penalty)
        return max(0.0, score), details

    def reason(self, reply: NoiseReply) -> str:
        return reply.reason.strip()

    async def steps(self, ask: Ask[Any], task: Task) -> NoiseReply:
        return await ask_once(self, ask, task)
