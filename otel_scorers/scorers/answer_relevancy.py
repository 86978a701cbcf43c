"""answer_relevancy: how well the agent's answer addresses what the user asked (spec/answer-relevancy.md).

Mastra's scorer shape, each step a function testable alone: `preprocess` (edge cases that need
no judge), `analyze` (statements and verdicts from the judge: one call by default, three with
`steps=3`), `score_verdicts` (the formula, in code: the judge's arithmetic is never trusted) and
the reason (the judge's explanation, or a third call).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from otel_scorers.model import AgentRun, JudgeUsage, Score
from otel_scorers.scorers.judge import (
    DATA_NOTICE,
    Judge,
    JudgeConfig,
    JudgeError,
    Tally,
    as_judge,
    delimit,
    require_litellm,
)
from otel_scorers.scorers.rounding import round2

#: Part of the cache key: a change to the prompts or their reading must bump it.
PROMPT_VERSION = "answer_relevancy/1"
VERDICTS = ("yes", "unsure", "no")

# ---- prompts --------------------------------------------------------------------------------

_TASK = (
    "You rate how relevant an AI agent's answer is to the user's question: whether it addresses what "
    "was asked, not whether it is correct. " + DATA_NOTICE
)
_SPLIT = "Split the answer into statements, each able to stand alone (keep the context it needs)."
_VERDICT = 'Verdicts: "yes" addresses the question, "unsure" related or partial, "no" irrelevant.'

SINGLE_SYSTEM = "\n".join(
    [
        _TASK,
        "1. " + _SPLIT,
        "2. Judge each statement against the question. " + _VERDICT,
        "Reply with only this JSON object:",
        '{"statements":[{"statement":"...","verdict":"yes|unsure|no","reason":"a few words"}],'
        '"explanation":"one sentence on how well the answer addresses the question"}',
    ]
)
EXTRACT_SYSTEM = "\n".join(
    [
        "You split an AI agent's answer into statements. " + DATA_NOTICE,
        _SPLIT + " Keep the answer's wording; do not judge it.",
        'Reply with only this JSON object: {"statements":["...","..."]}',
    ]
)
JUDGE_SYSTEM = "\n".join(
    [
        _TASK,
        "Judge each numbered statement against the question, one verdict per statement, in order. "
        + _VERDICT,
        'Reply with only this JSON object: {"verdicts":[{"verdict":"yes|unsure|no","reason":"a few words"}]}',
    ]
)
REASON_SYSTEM = "\n".join(
    [
        "You explain an answer-relevancy score in one or two sentences: what in the answer addresses the "
        "question and what does not. " + DATA_NOTICE,
        'Reply with only this JSON object: {"reason":"..."}',
    ]
)


def single_prompt(question: str, answer: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SINGLE_SYSTEM},
        {"role": "user", "content": f"{delimit('question', question)}\n{delimit('answer', answer)}"},
    ]


def extract_prompt(answer: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": EXTRACT_SYSTEM},
        {"role": "user", "content": delimit("answer", answer)},
    ]


def judge_prompt(question: str, statements: Sequence[str]) -> list[dict[str, str]]:
    numbered = "\n".join(f"{n}. {delimit('statement', text)}" for n, text in enumerate(statements, start=1))
    return [
        {"role": "system", "content": JUDGE_SYSTEM},
        {"role": "user", "content": f"{delimit('question', question)}\n{numbered}"},
    ]


def reason_prompt(
    question: str, answer: str, score: float, scale: float, judged: Sequence[JudgedStatement]
) -> list[dict[str, str]]:
    verdicts = "\n".join(f"- {item.verdict_read}: {delimit('statement', item.statement)}" for item in judged)
    return [
        {"role": "system", "content": REASON_SYSTEM},
        {
            "role": "user",
            "content": f"{delimit('question', question)}\n{delimit('answer', answer)}\n"
            f"Score: {score:g} of {scale:g}. Verdicts:\n{verdicts}",
        },
    ]


# ---- the shapes the judge replies in --------------------------------------------------------


class StatementReply(BaseModel):
    statement: str
    verdict: str
    reason: str = ""


class SingleReply(BaseModel):
    statements: list[StatementReply]
    explanation: str = ""


class ExtractReply(BaseModel):
    statements: list[str]


class VerdictReply(BaseModel):
    verdict: str
    reason: str = ""


class VerdictsReply(BaseModel):
    verdicts: list[VerdictReply]


class ReasonReply(BaseModel):
    reason: str


# ---- the steps ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JudgedStatement:
    statement: str
    verdict: str  # as the judge wrote it
    reason: str = ""

    @property
    def verdict_read(self) -> str:
        """The verdict as scored: yes/unsure/no, case and spaces ignored; anything else is no."""
        verdict = self.verdict.strip().lower()
        return verdict if verdict in VERDICTS else "no"

    @property
    def recognised(self) -> bool:
        return self.verdict.strip().lower() in VERDICTS


@dataclass(frozen=True, slots=True)
class Analysis:
    """What the judge said about one (question, answer) pair; cached as is."""

    statements: tuple[JudgedStatement, ...]
    explanation: str
    calls: int


def preprocess(run: AgentRun) -> Score | None:
    """The cases settled without a judge: not captured (skipped), empty answer (0)."""
    if run.output is None or "output" in run.missing:
        return Score("answer_relevancy", skipped="the trace did not carry the run's output")
    if run.input is None or "input" in run.missing:
        return Score("answer_relevancy", skipped="the trace did not carry the run's input")
    if not run.output.strip():
        return Score(
            "answer_relevancy",
            value=0.0,
            reason="The answer is empty, so it does not address the question.",
            details={"statements": [], "judge_calls": 0},
        )
    return None


def score_verdicts(verdicts: Sequence[str], uncertainty_weight: float = 0.3, scale: float = 1.0) -> float:
    """round2((yes + uncertainty_weight * unsure) / verdicts * scale); 0 without verdicts.
    Verdicts are read case-insensitively after trimming; anything else counts as no."""
    if not verdicts:
        return 0.0
    read = [verdict.strip().lower() for verdict in verdicts]
    relevant = read.count("yes") + uncertainty_weight * read.count("unsure")
    return round2(relevant / len(read) * scale)


async def analyze_single(judge: Judge, question: str, answer: str, tally: Tally) -> Analysis:
    """steps=1: statements, verdicts and the explanation in one call."""
    reply: SingleReply = await judge.ask(single_prompt(question, answer), SingleReply, tally)
    statements = tuple(JudgedStatement(s.statement, s.verdict, s.reason) for s in reply.statements)
    return Analysis(statements, reply.explanation.strip(), tally.calls)


async def analyze_three_steps(
    judge: Judge,
    question: str,
    answer: str,
    tally: Tally,
    uncertainty_weight: float,
    scale: float,
) -> Analysis:
    """steps=3, as Mastra does: extract statements; judge each against the question; reason."""
    extracted: ExtractReply = await judge.ask(extract_prompt(answer), ExtractReply, tally)
    texts = [text for text in extracted.statements if text.strip()]
    if not texts:
        return Analysis((), "The judge found no statements in the answer.", tally.calls)
    judged: VerdictsReply = await judge.ask(judge_prompt(question, texts), VerdictsReply, tally)
    # Verdicts pair with statements in order; the score counts verdicts, as the formula says.
    statements = tuple(
        JudgedStatement(texts[n] if n < len(texts) else "", v.verdict, v.reason)
        for n, v in enumerate(judged.verdicts)
    )
    value = score_verdicts([item.verdict for item in statements], uncertainty_weight, scale)
    reason: ReasonReply = await judge.ask(
        reason_prompt(question, answer, value, scale, statements),
        ReasonReply,
        tally,
    )
    return Analysis(statements, reason.reason.strip(), tally.calls)


# ---- the scorer -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AnswerRelevancy:
    judge: Judge
    model: str
    uncertainty_weight: float = 0.3
    scale: float = 1.0
    threshold: float | None = None
    steps: int = 1
    name: str = "answer_relevancy"
    needs: frozenset[str] = frozenset({"input", "output"})
    binary: bool = False

    @property
    def prompt_version(self) -> str:
        if self.steps == 1:
            return f"{PROMPT_VERSION}/steps1"
        # the third call's reason quotes the score, so its weight and scale belong in the key
        return f"{PROMPT_VERSION}/steps3/w{self.uncertainty_weight:g}/s{self.scale:g}"

    async def score(self, run: AgentRun) -> Score:
        early = preprocess(run)
        if early is not None:
            return early
        question, answer = run.input or "", run.output or ""
        key = (self.model, self.prompt_version, question, answer)
        tally = self.judge.tally(self.model)

        async def analyze() -> Analysis:
            self.judge.check_budget()
            return await self.analyze(question, answer, tally)

        try:
            analysis, cached = await self.judge.once(key, analyze)
        except JudgeError as exc:
            details: dict[str, Any] = {"judge_calls": tally.calls, "steps": self.steps}
            if tally.transcript is not None:
                details["prompts"] = tally.transcript
            return exc.to_score(self.name, details)
        if cached:
            usage, transcript = JudgeUsage(self.model, 0, 0, 0, 0.0), None
        else:
            usage, transcript = tally.usage(), tally.transcript
        return self.result(analysis, usage, cached, transcript)

    async def analyze(self, question: str, answer: str, tally: Tally) -> Analysis:
        if self.steps == 1:
            return await analyze_single(self.judge, question, answer, tally)
        return await analyze_three_steps(
            self.judge, question, answer, tally, self.uncertainty_weight, self.scale
        )

    def result(
        self, analysis: Analysis, usage: JudgeUsage, cached: bool, transcript: list[dict[str, Any]] | None
    ) -> Score:
        value = score_verdicts(
            [item.verdict for item in analysis.statements], self.uncertainty_weight, self.scale
        )
        details: dict[str, Any] = {
            "statements": [
                {"statement": item.statement, "verdict": item.verdict_read, "reason": item.reason}
                for item in analysis.statements
            ],
            "judge_calls": usage.calls,
            "steps": self.steps,
            "cached": cached,
        }
        unrecognised = [item.verdict for item in analysis.statements if not item.recognised]
        if unrecognised:
            details["unrecognised_verdicts"] = unrecognised
        if transcript is not None:
            details["prompts"] = transcript
        label = None
        if self.threshold is not None:
            label = "relevant" if value >= self.threshold else "not_relevant"
        reason = analysis.explanation or None
        return Score(self.name, value=value, label=label, reason=reason, details=details, usage=usage)


def answer_relevancy(
    model: str | None = None,
    uncertainty_weight: Annotated[float, Field(ge=0.0, le=1.0)] = 0.3,
    scale: Annotated[float, Field(gt=0.0)] = 1.0,
    threshold: float | None = None,
    steps: Literal[1, 3] = 1,
    judge: Judge | JudgeConfig | None = None,
) -> AnswerRelevancy:
    """How well the answer addresses the question, 0..scale, by an LLM judge.

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
    return AnswerRelevancy(
        judge=the_judge,
        model=the_judge.resolve_model(model),
        uncertainty_weight=uncertainty_weight,
        scale=scale,
        threshold=threshold,
        steps=steps,
    )
