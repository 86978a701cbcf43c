"""LLM-judged custom scorers without reimplementing the judge: a prompt and a JSON shape in, the
parsed reply with its usage out. Retries, the repair round, the cache, the budget and the
concurrency limit come from the shared `Judge`.

    class Politeness(BaseModel):
        polite: bool
        reason: str

    polite = llm_scorer(
        "polite",
        'Is the answer polite to the user? Reply with only JSON: {"polite": true|false, "reason": "..."}',
        Politeness,
        score=lambda reply: reply.polite,
        reason=lambda reply: reply.reason,
        needs=["output"],
        model="openai/gpt-4o-mini",
    )

Or, inside any async scorer, `reply = await ask_judge(prompt, Shape, data={"answer": run.output})`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from otel_scorers.model import AgentRun, Score, ScoreError
from otel_scorers.scorers.evaluator_version import Evaluator
from otel_scorers.scorers.judge import (
    Judge,
    JudgeConfig,
    JudgeError,
    JudgeReply,
    Question,
    as_judge,
    require_litellm,
)
from otel_scorers.scorers.judge.mask_threads import masked_blocks
from otel_scorers.scorers.judge.masking import Masker, MaskingError, RedactConfig, masker
from otel_scorers.scorers.protocol import Lane

T = TypeVar("T")

#: The prompt version a scorer starts at; bumped when its prompt changes, as it keys the cache.
FIRST_PROMPT_VERSION = "1"
#: What a judge scorer sees by default, and so what it is skipped without.
DEFAULT_NEEDS = frozenset({"input", "output"})
DataOf = Callable[[AgentRun], Mapping[str, "str | None"]]


def default_data(run: AgentRun) -> Mapping[str, str | None]:
    return {"question": run.input, "answer": run.output}


def judge_question(
    name: str, prompt: str, shape: Any, data: Mapping[str, str | None], system: str | None = None
) -> Question:
    """The prompt, then each data item as delimited, escaped data the judge is told not to obey."""
    blocks = tuple((tag, text or "") for tag, text in data.items())
    return Question(name, system or "", blocks, shape, request=prompt)


async def ask_judge(
    prompt: str,
    shape: type[T],
    *,
    data: Mapping[str, str | None] | None = None,
    system: str | None = None,
    model: str | None = None,
    judge: Judge | JudgeConfig | None = None,
    prompt_version: str = FIRST_PROMPT_VERSION,
    masking: Masker | bool = True,
) -> JudgeReply[T]:
    """Ask the judge `prompt` about `data` (tag -> text) and parse its reply as `shape` (a
    pydantic model, TypedDict or dataclass). Raises `JudgeError` (`.type`, `.to_score(name)`)
    when the judge fails or the hourly budget is spent; never anything else from the judge.
    The data is masked as the judge's `redact:` says, by `masking` when it is a `Masker`, not at
    all when it is False (a `MaskingError` when a pattern of the user's cannot finish: nothing
    is sent)."""
    the_judge = as_judge(judge)
    the_model = the_judge.resolve_model(model)
    masks = masker(the_judge.config.redact) if masking is True else masking or None
    if masks is not None and data:
        data = dict(await masked_blocks(masks, ((tag, text or "") for tag, text in data.items())))
    question = judge_question(getattr(shape, "__name__", "reply"), prompt, shape, data or {}, system)
    key = (the_model, prompt_version, repr(shape), question.instructions, question.request, question.data)
    return await the_judge.ask_one(key, question, model=the_model)


@dataclass(frozen=True, slots=True)
class LLMScorer(Generic[T]):
    """A scorer whose verdict is one judge call: `score(reply)` maps the parsed reply to a
    number, bool or `Score`; `reason(reply)` gives the explanation."""

    name: str
    prompt: str
    shape: type[T]
    to_value: Callable[[T], float | bool]
    judge: Judge
    model: str
    reason_of: Callable[[T], str | None] | None = None
    data: DataOf = default_data
    system: str | None = None
    prompt_version: str = FIRST_PROMPT_VERSION
    needs: frozenset[str] = DEFAULT_NEEDS
    binary: bool = False
    #: This binding's `redact:`, over the judge's (None: the judge's).
    redaction: RedactConfig | None = None
    lane: ClassVar[Lane] = "judge"

    def with_redaction(self, redaction: RedactConfig) -> LLMScorer[T]:
        return replace(self, redaction=redaction)

    async def score(self, run: AgentRun) -> Score:
        masking = masker(self.redaction if self.redaction is not None else self.judge.config.redact)
        try:
            reply = await ask_judge(
                self.prompt,
                self.shape,
                data=self.data(run),
                system=self.system,
                model=self.model,
                judge=self.judge,
                prompt_version=self.prompt_version,
                masking=masking or False,
            )
        except JudgeError as exc:
            return exc.to_score(self.name)
        except MaskingError as exc:
            return Score(self.name, error=ScoreError("redaction", str(exc)))
        raw = self.to_value(reply.value)
        value = (1.0 if raw else 0.0) if isinstance(raw, bool) else float(raw)
        if not math.isfinite(value):
            return JudgeError("invalid_value", f"score() returned {raw!r}", reply.usage).to_score(self.name)
        details: dict[str, Any] = {
            "reply": _plain(reply.value),
            "judge_calls": reply.usage.calls,
            "cached": reply.cached,
        }
        if reply.transcript:
            details["prompts"] = list(reply.transcript)
        if masking is not None:
            details["redacted"] = dict(masking.counts)
        reason = self.reason_of(reply.value) if self.reason_of is not None else None
        return Score(self.name, value=value, reason=reason, details=details, usage=reply.usage)

    def evaluator(self) -> Evaluator:
        """Its prompt, reply shape and readings (by import path), its version and its model."""
        args = {
            "name": self.name,
            "prompt": self.prompt,
            "system": self.system,
            "shape": self.shape,
            "score": self.to_value,
            "reason": self.reason_of,
            "data": self.data,
            "needs": sorted(self.needs),
            "binary": self.binary,
        }
        return Evaluator("llm_scorer", args, self.prompt_version, self.model)


def _plain(value: Any) -> Any:
    return value.model_dump() if isinstance(value, BaseModel) else value


def llm_scorer(
    name: str,
    prompt: str,
    shape: type[T],
    score: Callable[[T], float | bool],
    *,
    reason: Callable[[T], str | None] | None = None,
    data: DataOf = default_data,
    system: str | None = None,
    needs: Iterable[str] = DEFAULT_NEEDS,
    binary: bool = False,
    model: str | None = None,
    judge: Judge | JudgeConfig | None = None,
    prompt_version: str = FIRST_PROMPT_VERSION,
) -> LLMScorer[T]:
    """A judge scorer from a prompt, the reply's JSON shape and a function of the reply.

    `data(run)` says what the judge sees (default: the question and the answer), each item
    delimited and escaped; bump `prompt_version` when the prompt changes (it keys the cache).
    """
    require_litellm(name)
    the_judge = as_judge(judge)
    return LLMScorer(
        name=name,
        prompt=prompt,
        shape=shape,
        to_value=score,
        judge=the_judge,
        model=the_judge.resolve_model(model),
        reason_of=reason,
        data=data,
        system=system,
        prompt_version=prompt_version,
        needs=frozenset(needs),
        binary=binary,
    )
