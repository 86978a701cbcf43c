"""answer_relevancy: how well the agent's answer addresses what the user asked (spec/answer-relevancy.md).

A judged `Rule` like the others, so it shares their call path, cache and batching: `prepare`
(edge cases that need no judge), one call for statements, verdicts and an explanation (or, with
`steps=3`, Mastra's calls: extract the statements, judge them, then the reason call), and
`score_verdicts` (the formula, in code: the judge's arithmetic is never trusted).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.judge import Judge, JudgeConfig, as_judge, require_litellm
from otel_scorers.scorers.rounding import round2
from otel_scorers.scorers.rules.base import Ask, JudgedScorer, Task, need_input, need_output
from otel_scorers.scorers.rules.replies import YesUnsureNo

#: What an "unsure" verdict counts for, as a share of a "yes" (Mastra's weight).
UNCERTAINTY_WEIGHT = 0.3

_TASK = (
    "You rate how relevant an AI agent's answer is to the user's question: whether it addresses what "
    "was asked, not whether it is correct."
)
_SPLIT = "Split the answer into statements, each able to stand alone (keep the context it needs)."
_VERDICT = 'Verdicts: "yes" addresses the question, "unsure" related or partial, "no" irrelevant.'


# ---- the shapes the judge replies in --------------------------------------------------------


class StatementReply(BaseModel):
    statement: str
    verdict: YesUnsureNo
    reason: str = ""


class RelevancyReply(BaseModel):
    statements: list[StatementReply]
    explanation: str = ""


class ExtractReply(BaseModel):
    statements: list[str]


class VerdictReply(BaseModel):
    verdict: YesUnsureNo
    reason: str = ""


class VerdictsReply(BaseModel):
    verdicts: list[VerdictReply]


def relevant_share(verdicts: Sequence[str], uncertainty_weight: float = UNCERTAINTY_WEIGHT) -> float:
    """(yes + uncertainty_weight * unsure) / verdicts; 0 without verdicts."""
    if not verdicts:
        return 0.0
    return (verdicts.count("yes") + uncertainty_weight * verdicts.count("unsure")) / len(verdicts)


def score_verdicts(
    verdicts: Sequence[str], uncertainty_weight: float = UNCERTAINTY_WEIGHT, scale: float = 1.0
) -> float:
    """The score: round2(relevant_share * scale), rounded once, after the scale."""
    return round2(relevant_share(verdicts, uncertainty_weight) * scale)


@dataclass(frozen=True, slots=True)
class AnswerRelevancyRule:
    uncertainty_weight: float = UNCERTAINTY_WEIGHT

    kind = "answer_relevancy"
    shape = RelevancyReply
    mastra_steps = 3
    needs = frozenset({"input", "output"})
    higher_is_worse = False
    instructions = f"{_TASK}\n1. {_SPLIT}\n2. Judge each statement against the question. {_VERDICT}"
    reply_format = (
        '{"statements":[{"statement":"...","verdict":"yes|unsure|no","reason":"a few words"}],'
        '"explanation":"one sentence on how well the answer addresses the question"}'
    )

    @property
    def version(self) -> str:
        return f"answer_relevancy/2/w{self.uncertainty_weight:g}"

    def prepare(self, run: AgentRun) -> Task | Score:
        early = need_output(run, self.kind) or need_input(run, self.kind)
        if early is not None:
            return early
        if not (run.output or "").strip():
            return Score(
                self.kind,
                value=0.0,
                reason="The answer is empty, so it does not address the question.",
                details={"statements": [], "judge_calls": 0},
            )
        return Task((("question", run.input or ""), ("answer", run.output or "")))

    def value(self, reply: RelevancyReply, task: Task) -> tuple[float, dict[str, Any]]:
        verdicts = [item.verdict for item in reply.statements]
        details = {
            "statements": [
                {"statement": item.statement, "verdict": item.verdict, "reason": item.reason}
                for item in reply.statements
            ]
        }
        return relevant_share(verdicts, self.uncertainty_weight), details

    def reason(self, reply: RelevancyReply) -> str:
        return reply.explanation.strip()

    async def steps(self, ask: Ask[Any], task: Task) -> RelevancyReply:
        """Mastra's first two calls: the statements, then a verdict for each, in order."""
        answer = tuple((tag, text) for tag, text in task.data if tag == "answer")
        extracted: ExtractReply = await ask(
            f"You split an AI agent's answer into statements. {_SPLIT} Keep the answer's wording; do not judge it.",
            '{"statements":["...","..."]}',
            answer,
            ExtractReply,
        )
        texts = [text for text in extracted.statements if text.strip()]
        if not texts:
            return RelevancyReply(statements=[], explanation="The judge found no statements in the answer.")
        numbered = tuple((f"statement_{n}", text) for n, text in enumerate(texts, 1))
        judged: VerdictsReply = await ask(
            f"{_TASK}\nJudge each numbered statement against the question, one verdict per statement, "
            f"in order. {_VERDICT}",
            '{"verdicts":[{"verdict":"yes|unsure|no","reason":"a few words"}]}',
            (*(block for block in task.data if block[0] == "question"), *numbered),
            VerdictsReply,
        )
        # Verdicts pair with statements in order; the score counts verdicts, as the formula says.
        return RelevancyReply(
            statements=[
                StatementReply(
                    statement=texts[n] if n < len(texts) else "", verdict=v.verdict, reason=v.reason
                )
                for n, v in enumerate(judged.verdicts)
            ]
        )


def answer_relevancy(
    model: str | None = None,
    uncertainty_weight: Annotated[float, Field(ge=0.0, le=1.0)] = UNCERTAINTY_WEIGHT,
    scale: Annotated[float, Field(gt=0.0)] = 1.0,
    threshold: float | None = None,
    steps: Literal[1, 3] = 1,
    judge: Judge | JudgeConfig | None = None,
) -> JudgedScorer[Any]:
    """How well the answer addresses the question, 0..scale, by an LLM judge; with a
    `threshold`, labelled `relevant` or `not_relevant`.

    `model` is any litellm model string (default: the judge config's). `judge` shares one
    `Judge` (concurrency, budget, cache) across scorers; default: `OTEL_SCORERS_JUDGE_*`.
    """
    if not 0.0 <= uncertainty_weight <= 1.0:
        raise ValueError(f"uncertainty_weight must be between 0 and 1, got {uncertainty_weight}")
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    if steps not in (1, 3):
        raise ValueError(f"steps must be 1 (one judge call) or 3 (Mastra's three calls), got {steps}")
    require_litellm("answer_relevancy")
    the_judge = as_judge(judge)
    return JudgedScorer(
        AnswerRelevancyRule(uncertainty_weight),
        the_judge,
        the_judge.resolve_model(model),
        scale=scale,
        threshold=threshold,
        steps=steps,
        labels=("relevant", "not_relevant"),
    )
