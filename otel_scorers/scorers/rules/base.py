"""What every judged scorer shares: a `Rule` says what the judge is asked and how the score
follows from its verdicts; `JudgedScorer` runs it through the judge's one call path
(`Judge.ask_one` for one call, batched when configured; `Judge.consult` for Mastra's steps) and
turns the reply into a `Score`.

A rule is Mastra's scorer shape in small testable parts: `prepare` (what the run must carry,
and the data the judge sees, or a `Score` when no judge is needed), the one-call prompt and its
reply shape, `steps` (Mastra's multi-call flow, returning the same shape) and `value` (the
formula, in code: the judge's own arithmetic is never trusted).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel

from otel_scorers.conventions.formats.bounded_json import within_depth
from otel_scorers.model import AgentRun, ContextItem, Score, ScoreError, passes
from otel_scorers.scorers.evaluator_version import Evaluator
from otel_scorers.scorers.judge import Consultation, Data, Judge, JudgeError, JudgeReply, Question
from otel_scorers.scorers.judge.mask_threads import masked_blocks
from otel_scorers.scorers.judge.masking import Masker, MaskingError, RedactConfig, masker
from otel_scorers.scorers.protocol import Lane
from otel_scorers.scorers.rounding import round2

R = TypeVar("R", bound=BaseModel)
R_co = TypeVar("R_co", bound=BaseModel, covariant=True)
#: The context kinds that ground an answer's facts (system instructions are not evidence).
GROUNDING = frozenset({"document", "tool_result", "given"})
NO_CONTEXT = "the run has no context (tool results, retrieved documents) to judge the answer against"


@dataclass(frozen=True, slots=True)
class Task:
    """One run as a rule asks the judge about it: the data blocks, and what `value` needs
    besides the reply (how many context items, which criteria are required...)."""

    data: Data
    facts: Mapping[str, Any] = field(default_factory=dict)


Ask = Callable[[str, str, Data, type[R]], Awaitable[R]]


class Rule(Protocol[R]):
    """One judged scorer's questions and formula."""

    @property
    def kind(self) -> str:
        """The config type, e.g. "faithfulness"."""
        ...

    @property
    def version(self) -> str:
        """Part of the cache key: bump it when a prompt or its reading changes."""
        ...

    @property
    def shape(self) -> type[R]:
        """The one-call reply."""
        ...

    @property
    def instructions(self) -> str:
        """The one-call task, in our own words."""
        ...

    @property
    def reply_format(self) -> str:
        """The JSON the one-call reply must have."""
        ...

    @property
    def mastra_steps(self) -> int:
        """Mastra's number of calls, its reason call included."""
        ...

    @property
    def needs(self) -> frozenset[str]: ...

    @property
    def higher_is_worse(self) -> bool: ...

    def prepare(self, run: AgentRun) -> Task | Score: ...

    def value(self, reply: R, task: Task) -> tuple[float, dict[str, Any]]: ...

    def reason(self, reply: R) -> str: ...

    async def steps(self, ask: Ask[Any], task: Task) -> R:
        """Mastra's calls before its reason call, returning the one-call shape."""
        ...


_REASON = (
    "You explain an evaluation score in one or two sentences: what in the verdicts decided it. "
    'Reply with only this JSON object: {"reason":"..."}'
)


class ReasonReply(BaseModel):
    reason: str = ""


def context_blocks(items: Sequence[ContextItem], kinds: frozenset[str] = GROUNDING) -> Data:
    """The context items of these kinds as numbered blocks, each saying where it came from."""
    chosen = [item for item in items if item.kind in kinds]
    return tuple(
        (f"context_{n}", f"[{item.kind}: {item.source}] {item.text}") for n, item in enumerate(chosen, 1)
    )


def share(counts: Sequence[str], wanted: str) -> float:
    return sum(1 for value in counts if value == wanted) / len(counts) if counts else 0.0


async def ask_once(rule: Rule[R], ask: Ask[Any], task: Task) -> R:
    """The analysis step of a scorer whose Mastra flow is one analysis and a reason: the
    one-call prompt itself."""
    reply: R = await ask(rule.instructions, rule.reply_format, task.data, rule.shape)
    return reply


def answer_only(kind: str, run: AgentRun, empty: str) -> Task | Score:
    """The answer alone as the judged text; `empty` is the reason of an empty answer's 0."""
    early = need_output(run, kind)
    if early is not None:
        return early
    if not (run.output or "").strip():
        return zero(kind, empty)
    return Task((("answer", run.output or ""),), {"source_tag": "answer"})


def question_answer_context(kind: str, run: AgentRun) -> Task | Score:
    """The question, the answer and the numbered grounding context, or why not."""
    early = need_input(run, kind) or need_output(run, kind)
    if early is not None:
        return early
    blocks = context_blocks(run.context, GROUNDING)
    if not blocks:
        return skipped(kind, NO_CONTEXT)
    return Task(
        (("question", run.input or ""), ("answer", run.output or ""), *blocks), {"items": len(blocks)}
    )


# ---- running a rule -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Analysis(Generic[R]):
    """What the judge said about one task in Mastra's steps: the verdicts, and the reason its
    last call gave; cached as is."""

    reply: R
    reason: str


@dataclass(frozen=True, slots=True)
class JudgedScorer(Generic[R]):
    """A rule bound to a judge, with the options every judged scorer takes. `labels` are the
    words for reaching the threshold and not."""

    rule: Rule[R]
    judge: Judge
    model: str
    scale: float = 1.0
    threshold: float | None = None
    steps: int = 1
    name: str = ""
    needs: frozenset[str] = frozenset()
    binary: bool = False
    labels: tuple[str, str] = ("pass", "fail")
    #: This binding's `redact:`, over the judge's (None: the judge's).
    redaction: RedactConfig | None = None
    lane: ClassVar[Lane] = "judge"

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", self.rule.kind)
        if not self.needs:
            object.__setattr__(self, "needs", self.rule.needs)

    @property
    def higher_is_worse(self) -> bool:
        return self.rule.higher_is_worse

    @property
    def value_range(self) -> tuple[float, float]:
        """Its values, and so its labels' (`label_ranges`): 0 to its scale."""
        return (0.0, self.scale)

    def with_redaction(self, redaction: RedactConfig) -> JudgedScorer[R]:
        return replace(self, redaction=redaction)

    async def masked(self, task: Task) -> tuple[Task, Masker | None] | Score:
        """The task with its private text masked, before any prompt is built (off the loop when
        it is long: `mask_threads`), and the masker that the score's later prompts go through;
        an error result when masking cannot finish."""
        masking = masker(self.redaction if self.redaction is not None else self.judge.config.redact)
        if masking is None:
            return task, None
        try:
            return replace(task, data=await masked_blocks(masking, task.data)), masking
        except MaskingError as exc:
            return Score(self.name, error=ScoreError("redaction", str(exc)))

    def cache_key(self, task: Task) -> tuple[Any, ...]:
        # Mastra's reason call quotes the score, so its scale is part of what was asked
        steps = f"steps{self.steps}" if self.steps == 1 else f"steps{self.steps}/scale{self.scale:g}"
        return (self.model, self.rule.version, steps, self.rule.instructions, task.data)

    def evaluator(self) -> Evaluator:
        """The rule (its fields and its prompt's words), the options, the prompt version, the model."""
        rule = self.rule
        args = {
            "rule": rule,
            "instructions": rule.instructions,
            "reply_format": rule.reply_format,
            "scale": self.scale,
            "threshold": self.threshold,
            "steps": self.steps,
            "labels": self.labels,
        }
        return Evaluator(rule.kind, args, rule.version, self.model)

    def question(self, task: Task) -> Question:
        rule = self.rule
        return Question(self.name, rule.instructions, task.data, rule.shape, rule.reply_format)

    async def score(self, run: AgentRun) -> Score:
        prepared = self.rule.prepare(run)
        if isinstance(prepared, Score):
            return prepared if prepared.scorer == self.name else replace(prepared, scorer=self.name)
        masked = await self.masked(prepared)
        if isinstance(masked, Score):
            return masked
        task, masking = masked
        key = self.cache_key(task)
        group: tuple[Any, ...] = (run.trace_id, run.span_id)
        if masking is not None:  # a call is shared only by questions masked alike
            group = (*group, masking.config.kinds, tuple(masking.config.patterns.items()))
        try:
            if self.steps == 1:
                one = await self.judge.ask_one(key, self.question(task), model=self.model, group=group)
                return self.result(one, one.value, self.rule.reason(one.value), task, masking)
            steps = await self.judge.consult(
                key, lambda consultation: self.analyze(task, consultation, masking), model=self.model
            )
        except JudgeError as exc:
            return exc.to_score(self.name, {"steps": self.steps})
        except MaskingError as exc:
            return Score(self.name, error=ScoreError("redaction", str(exc)))
        return self.result(steps, steps.value.reply, steps.value.reason, task, masking)

    async def analyze(
        self, task: Task, consultation: Consultation, masking: Masker | None = None
    ) -> Analysis[R]:
        """Mastra's calls: the rule's steps, then a call for the reason (none when the steps
        settled it, as when the judge found nothing to judge)."""
        ask = self.asker(consultation, masking)
        reply = await self.rule.steps(ask, task)
        settled = self.rule.reason(reply)
        if settled:
            return Analysis(reply, settled)
        value, _ = self.rule.value(reply, task)
        verdicts = json.dumps(reply.model_dump(exclude={"reason"}), ensure_ascii=False)[:6000]
        explained = await ask(
            _REASON,
            '{"reason":"..."}',
            (("score", f"{round2(value * self.scale):g} of {self.scale:g}"), ("verdicts", verdicts)),
            ReasonReply,
        )
        return Analysis(reply, explained.reason.strip())

    def asker(self, consultation: Consultation, masking: Masker | None = None) -> Ask[Any]:
        async def ask(instructions: str, reply_format: str, data: Data, shape: type[Any]) -> Any:
            if masking is not None:  # what a step adds (the verdicts, echoing the judge) too
                data = await masked_blocks(masking, data)
            question = Question(self.name, instructions, data, shape, reply_format)
            return await self.judge.ask(question, consultation)

        return ask

    def result(
        self, judged: JudgeReply[Any], reply: R, reason: str, task: Task, masking: Masker | None = None
    ) -> Score:
        usage = judged.usage
        try:
            raw, details = self.rule.value(reply, task)
        except JudgeError as exc:
            exc.usage = exc.usage or usage
            return exc.to_score(self.name, {"steps": self.steps})
        value = round2(max(0.0, raw) * self.scale)
        details = {**details, "judge_calls": usage.calls, "steps": self.steps, "cached": judged.cached}
        if judged.batched_with:
            details["batched_with"] = list(judged.batched_with)
        if judged.fallback:
            details["batch_fallback"] = True
        if judged.transcript:
            details["prompts"] = list(judged.transcript)
        if masking is not None:
            details["redacted"] = dict(masking.counts)
        label = None
        if self.threshold is not None:
            label = (
                self.labels[0] if passes(value, self.threshold, self.rule.higher_is_worse) else self.labels[1]
            )
        return Score(self.name, value=value, label=label, reason=reason or None, details=details, usage=usage)


# ---- what rules read from a run -------------------------------------------------------------


def skipped(kind: str, why: str) -> Score:
    return Score(kind, skipped=why)


def zero(kind: str, why: str) -> Score:
    return Score(kind, value=0.0, reason=why, details={"judge_calls": 0})


def need_output(run: AgentRun, kind: str) -> Score | None:
    if run.output is None or "output" in run.missing:
        return skipped(kind, "the trace did not carry the run's output")
    return None


def need_input(run: AgentRun, kind: str) -> Score | None:
    if run.input is None or "input" in run.missing:
        return skipped(kind, "the trace did not carry the run's input")
    return None


@dataclass(frozen=True, slots=True)
class Reference:
    """Where a scorer's reference text comes from: given `text`, else a path into the run
    (`attributes.<key>`, `resource.<key>`)."""

    text: str | None = None
    path: str | None = None
    getter: Callable[[AgentRun], Any] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, text: str | None, path: str | None, what: str) -> Reference:
        if text is not None and path is not None:
            raise ValueError(f"give the {what} as text or as a path into the run, not both")
        if path is None:
            return cls(text)
        from otel_scorers.runs.paths import path_getter

        return cls(None, path, path_getter(path, f"{what}_from"))

    def read(self, run: AgentRun) -> str | None:
        if self.text is not None:
            return self.text
        if self.getter is None:
            return None
        value = self.getter(run)
        if isinstance(value, str):
            return value if value.strip() else None
        if isinstance(value, (list, dict, int, float)) and not isinstance(value, bool):
            return json.dumps(within_depth(value), ensure_ascii=False)
        return None

    def missing_reason(self, what: str) -> str:
        if self.path is not None:
            return f"no {what}: the run has nothing at {self.path}"
        return f"no {what}: pass it as an argument or a path into the run ({what}_from: attributes.<key>)"
