"""What one judge call returned and cost, and what one score's calls add up to."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from otel_scorers.model import JudgeUsage
from otel_scorers.scorers.judge.config import Prices
from otel_scorers.throttled_log import throttled

T = TypeVar("T")
Message = Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Completion:
    """One judge call's reply text and what it cost."""

    text: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    #: False when the reply's usage could not be read as token counts (missing, no prompt tokens,
    #: negative, not whole numbers): the call was answered, so it was billed, at what it was
    #: expected to cost.
    counted: bool = True


@dataclass
class Consultation:
    """One score's judge work (or one batch's): its model and deadline, and what its calls add
    up to (`transcript` only with record_prompts)."""

    model: str
    deadline: float
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    transcript: list[dict[str, Any]] | None = None

    def add(self, messages: Sequence[Message], completion: Completion) -> None:
        self.calls += 1
        self.input_tokens += completion.input_tokens
        self.output_tokens += completion.output_tokens
        if completion.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + completion.cost_usd
        if self.transcript is not None:
            self.transcript.append({"messages": [dict(m) for m in messages], "reply": completion.text})

    def usage(self) -> JudgeUsage:
        return JudgeUsage(self.model, self.calls, self.input_tokens, self.output_tokens, self.cost_usd)


@dataclass(frozen=True, slots=True)
class JudgeReply(Generic[T]):
    """A parsed, validated judge reply, and the usage of the calls that produced it: zero when
    it came from the cache or from an identical question asked at the same time (`cached`).
    `batched_with` names the other questions its call answered; `fallback` says a batch could
    not answer it and it was asked alone."""

    value: T
    usage: JudgeUsage
    cached: bool = False
    transcript: tuple[Mapping[str, Any], ...] = ()
    batched_with: tuple[str, ...] = ()
    fallback: bool = False


def completion_of(litellm: Any, model: str, response: Any, prices: Prices | None = None) -> Completion:
    """A litellm response's text, tokens and cost (the configured `prices` first)."""
    usage = getattr(response, "usage", None)
    input_tokens = _tokens(getattr(usage, "prompt_tokens", None))
    output_tokens = _tokens(getattr(usage, "completion_tokens", None))
    # A prompt answered took tokens: none reported for it is no count (litellm reports a usage
    # the reply left out as 0 tokens).
    counted = bool(input_tokens) and output_tokens is not None
    input_tokens, output_tokens = input_tokens or 0, output_tokens or 0
    try:
        text = response.choices[0].message.content or ""
    except (AttributeError, IndexError, TypeError):
        text = ""
    cost: Any = None
    if prices is None:
        # litellm prices each response already; recompute only when it did not
        cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
    if not counted:
        return Completion(text, input_tokens, output_tokens, None, counted=False)
    if not isinstance(cost, (int, float)) or isinstance(cost, bool) or not 0 <= cost < math.inf:
        cost = judge_cost(litellm, model, input_tokens, output_tokens, prices)
    return Completion(text, input_tokens, output_tokens, float(cost) if cost is not None else None)


def _tokens(value: Any) -> int | None:
    """A token count as the provider reported it: a whole number, not negative; None for
    anything else, or none. A negative count priced as it is gave budget back, and a missing one
    cost nothing: a judge reporting -10⁹ tokens a call, or none, was called without end against
    an hourly budget."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value) if value >= 0 else None


def judge_cost(
    litellm: Any, model: str, input_tokens: int, output_tokens: int, prices: Prices | None = None
) -> float | None:
    """USD at the configured `prices`, else from litellm's cost table; None for a model neither
    prices (a local one, say)."""
    if prices is not None:
        return prices.cost(input_tokens, output_tokens)
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=input_tokens, completion_tokens=output_tokens
        )
        return float(prompt_cost) + float(completion_cost)
    except Exception:
        throttled.warning(
            f"judge_cost:{model}",
            "otel_scorers: no price for judge model %s; its cost is not counted (give judge.prices)",
            model,
        )
        return None
