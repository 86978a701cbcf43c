"""What every judged scorer shares: a `Rule` says what the judge is asked and how the score
follows from its verdicts; `JudgedScorer` runs it (edge cases, one call or Mastra's steps, the
cache, the reason, usage and details, batching) and turns it into a `Score`.

A rule is Mastra's scorer shape in small testable parts: `prepare` (what the run must carry,
and the data the judge sees, or a `Score` when no judge is needed), the one-call prompt and its
reply shape, `steps` (Mastra's multi-call flow, returning the same shape) and `value` (the
formula, in code: the judge's own arithmetic is never trusted).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from otel_scorers.model import AgentRun, ContextItem, JudgeUsage, Score
from otel_scorers.scorers.judge import DATA_NOTICE, Judge, JudgeError, Tally, delimit
from otel_scorers.scorers.rounding import round2

R = TypeVar("R", bound=BaseModel)
R_co = TypeVar("R_co", bound=BaseModel, covariant=True)
#: The judged text, as (tag, text) blocks: each goes to the judge delimited and escaped.
Data = tuple[tuple[str, str], ...]
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


def messages(instructions: str, reply_format: str, data: Data) -> list[dict[str, str]]:
    system = f"{instructions}\n{DATA_NOTICE}\nReply with only this JSON object: {reply_format}"
    user = "\n".join(delimit(tag, text) for tag, text in data) or "(no data)"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


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


def read_verdict(verdict: str, allowed: Sequence[str] = ("yes", "no")) -> str:
    """A verdict as scored: case and spaces ignored; anything else is `no`."""
    read = verdict.strip().lower()
    return read if read in allowed else "no"


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
    """What the judge said about one task; cached as is."""

    reply: R
    calls: int
    reason: str


@dataclass(frozen=True, slots=True)
class JudgedScorer(Generic[R]):
    """A rule bound to a judge, with the options every judged scorer takes."""

    rule: Rule[R]
    judge: Judge
    model: str
    scale: float = 1.0
    threshold: float | None = None
    steps: int = 1
    name: str = ""
    needs: frozenset[str] = frozenset()
    binary: bool = False

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", self.rule.kind)
        if not self.needs:
            object.__setattr__(self, "needs", self.rule.needs)

    @property
    def batched(self) -> bool:
        return self.steps == 1 and self.judge.config.batch

    def cache_key(self, task: Task) -> tuple[Any, ...]:
        return (self.model, self.rule.version, f"steps{self.steps}", self.rule.instructions, task.data)

    async def score(self, run: AgentRun) -> Score:
        prepared = self.rule.prepare(run)
        if isinstance(prepared, Score):
            return prepared if prepared.scorer == self.name else _renamed(prepared, self.name)
        task = prepared
        if self.batched:
            from otel_scorers.scorers.judged.batch import batched_analysis

            return await batched_analysis(self, run, task)
        tally = self.judge.tally(self.model)

        async def analyze() -> Analysis[R]:
            self.judge.check_budget()
            return await self.analyze(task, tally)

        try:
            analysis, cached = await self.judge.once(self.cache_key(task), analyze)
        except JudgeError as exc:
            return exc.to_score(self.name, self._call_details(tally))
        usage = JudgeUsage(self.model, 0, 0, 0, 0.0) if cached else tally.usage()
        return self.result(analysis, task, usage, cached, None if cached else tally.transcript)

    async def analyze(self, task: Task, tally: Tally) -> Analysis[R]:
        ask = self.asker(tally)
        if self.steps == 1:
            reply = await ask(self.rule.instructions, self.rule.reply_format, task.data, self.rule.shape)
            return Analysis(reply, tally.calls, self.rule.reason(reply))
        reply = await self.rule.steps(ask, task)
        value, _ = self.rule.value(reply, task)
        verdicts = json.dumps(reply.model_dump(exclude={"reason"}), ensure_ascii=False)[:6000]
        explained = await ask(
            _REASON,
            '{"reason":"..."}',
            (("score", f"{round2(value * self.scale):g} of {self.scale:g}"), ("verdicts", verdicts)),
            ReasonReply,
        )
        return Analysis(reply, tally.calls, explained.reason.strip())

    def asker(self, tally: Tally) -> Ask[Any]:
        async def ask(instructions: str, reply_format: str, data: Data, shape: type[Any]) -> Any:
            return await self.judge.ask(
                messages(instructions, reply_format, data), shape, tally, name=self.name
            )

        return ask

    def result(
        self,
        analysis: Analysis[R],
        task: Task,
        usage: JudgeUsage,
        cached: bool,
        transcript: list[dict[str, Any]] | None,
        extra: Mapping[str, Any] | None = None,
    ) -> Score:
        try:
            raw, details = self.rule.value(analysis.reply, task)
        except JudgeError as exc:
            exc.usage = exc.usage or usage
            return exc.to_score(self.name, {"judge_calls": usage.calls})
        value = round2(max(0.0, raw) * self.scale)
        details = {
            **details,
            "judge_calls": usage.calls,
            "steps": self.steps,
            "cached": cached,
            **(extra or {}),
        }
        if transcript:
            details["prompts"] = transcript
        label = None
        if self.threshold is not None:
            passed = value <= self.threshold if self.rule.higher_is_worse else value >= self.threshold
            label = "pass" if passed else "fail"
        return Score(
            self.name, value=value, label=label, reason=analysis.reason or None, details=details, usage=usage
        )

    def _call_details(self, tally: Tally) -> dict[str, Any]:
        details: dict[str, Any] = {"judge_calls": tally.calls, "steps": self.steps}
        if tally.transcript is not None:
            details["prompts"] = tally.transcript
        return details


def _renamed(score: Score, name: str) -> Score:
    from dataclasses import replace

    return replace(score, scorer=name)


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
        from otel_scorers.filters import path_getter

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
            return json.dumps(value, ensure_ascii=False)
        return None

    def missing_reason(self, what: str) -> str:
        if self.path is not None:
            return f"no {what}: the run has nothing at {self.path}"
        return f"no {what}: pass it as an argument or a path into the run ({what}_from: attributes.<key>)"
