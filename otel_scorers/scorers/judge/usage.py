"""What one judge call returned and cost, and what one score's calls add up to."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from otel_scorers.model import JudgeUsage
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


@dataclass
class Tally:
    """One score's judge work: its model and deadline, and what its calls add up to
    (`transcript` only with record_prompts)."""

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
    """A parsed, validated judge reply, and the usage of the calls that produced it."""

    value: T
    usage: JudgeUsage
    cached: bool = False
    transcript: tuple[Mapping[str, Any], ...] = ()


def completion_of(litellm: Any, model: str, response: Any) -> Completion:
    """A litellm response's text, tokens and cost."""
    usage = getattr(response, "usage", None)
    input_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    output_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    try:
        text = response.choices[0].message.content or ""
    except (AttributeError, IndexError, TypeError):
        text = ""
    # litellm prices each response already; recompute only when it did not
    cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
    if not isinstance(cost, (int, float)):
        cost = judge_cost(litellm, model, input_tokens, output_tokens)
    return Completion(text, input_tokens, output_tokens, float(cost) if cost is not None else None)


def judge_cost(litellm: Any, model: str, input_tokens: int, output_tokens: int) -> float | None:
    """USD from litellm's cost table; None for a model it does not price (a local one, say)."""
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=input_tokens, completion_tokens=output_tokens
        )
        return float(prompt_cost) + float(completion_cost)
    except Exception:
        throttled.warning(
            f"judge_cost:{model}", "otel_scorers: no price for judge model %s; its cost is not counted", model
        )
        return None
