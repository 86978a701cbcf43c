"""What the judge may spend: the hourly caps (dollars, calls) and each call's reservation.

A call reserves, before it is sent, the most it can cost: its prompt's tokens and as many output
tokens as its output bound (`max_tokens`) allows, at the model's prices. Calls in flight thus
never hold less than they will cost, and however many race for the last cent, the hour is
overspent by less than one call (`CostBudget`'s rule: a call is admitted while something is
left). What a call did not use is given back when it settles. While calls in flight hold
reservations that may give some back, a call that does not fit waits for them (within its
deadline) instead of being refused with budget left.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from otel_scorers.scorers.judge.budget import CostBudget
from otel_scorers.scorers.judge.config import JudgeConfig, unpriced_budget
from otel_scorers.scorers.judge.errors import JudgeError
from otel_scorers.scorers.judge.usage import Consultation, Message, judge_cost
from otel_scorers.throttled_log import throttled

#: The reply a call is expected to need at least, for the whole-budget check: a short verdict.
SHORT_REPLY_TOKENS = 256
#: How often a call refused by the budget looks again while calls in flight may give some back.
RESERVE_POLL_S = 0.01


class Spend:
    """The hourly cost budget and call cap of one judge (either may be off)."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        budget = config.cost_budget_usd_per_hour
        self.budget = CostBudget(budget) if budget is not None else None
        calls = config.max_calls_per_hour
        self.call_budget = CostBudget(float(calls)) if calls is not None else None

    def renew_after_fork(self) -> None:
        for budget in (self.budget, self.call_budget):
            if budget is not None:
                budget.renew_after_fork()

    def check(self, model: str | None = None) -> None:
        """`JudgeError("budget")` when the hourly budget (cost or calls) is spent: checked before
        any call. A cost budget that could not count `model`'s calls (no price for it) is a
        `judge_error`, never a budget that lets every call through (the config file and
        `JudgeConfig` refuse it by the same rule, `unpriced_budget`)."""
        if model is not None:
            problem = unpriced_budget(self.config, model)
            if problem is not None:
                raise JudgeError("judge_error", f"cost_budget_usd_per_hour: {problem}; no call was made")
        if self.budget is not None and self.budget.exhausted():
            self._budget_spent()
        if self.call_budget is not None and self.call_budget.exhausted(whole=True):
            self._calls_spent()

    async def reserve(
        self, litellm: Any, model: str, request: Mapping[str, Any], consultation: Consultation
    ) -> float:
        """Reserve the most this call can cost and one call, before it is sent (returned, to be
        given to `settle`); `JudgeError("budget")` when the hourly caps leave nothing for it, or
        when the call alone is expected to cost more than the whole budget."""
        if self.budget is not None:
            least, most = self.cost_range(litellm, model, request["messages"], request["max_tokens"])
            if least > self.budget.usd_per_hour:
                raise JudgeError(
                    "budget",
                    f"this call's expected cost (${least:.4g}) is more than the whole hourly budget "
                    f"(${self.budget.usd_per_hour:g}); raise cost_budget_usd_per_hour or lower max_prompt_tokens",
                    consultation.usage(),
                )
            while not self.budget.reserve(most):
                if not self.budget.could_fit_later() or time.monotonic() >= consultation.deadline:
                    _raise_with_usage(self._budget_spent, consultation)
                await asyncio.sleep(RESERVE_POLL_S)
        else:
            most = 0.0
        if self.call_budget is not None and not self.call_budget.reserve(1.0, whole=True):
            self.settle(most, None)
            _raise_with_usage(self._calls_spent, consultation)
        return most

    def settle(self, reserved: float, cost: float | None) -> None:
        """A reserved call ended: `cost` is what it really cost (None: nothing was billed)."""
        if self.budget is not None:
            self.budget.settle(reserved, cost)
        if self.call_budget is not None:
            self.call_budget.settle(1.0, 1.0)  # a call sent is spent, whatever came of it

    def cost_range(
        self, litellm: Any, model: str, messages: Sequence[Message], output_bound: int
    ) -> tuple[float, float]:
        """What a call is expected to cost at least (its prompt, and a short reply) and the most
        it can cost (its prompt, and `output_bound` output tokens)."""
        try:
            prompt_tokens = int(litellm.token_counter(model=model, messages=[dict(m) for m in messages]))
        except Exception:
            prompt_tokens = sum(len(str(message.get("content", ""))) for message in messages) // 3
        prices = self.config.prices
        least = judge_cost(litellm, model, prompt_tokens, min(SHORT_REPLY_TOKENS, output_bound), prices)
        most = judge_cost(litellm, model, prompt_tokens, output_bound, prices)
        return least or 0.0, most or 0.0

    def _budget_spent(self) -> None:
        assert self.budget is not None
        throttled.warning(
            "judge_budget",
            "otel_scorers: the judge's hourly cost budget ($%g) is spent; skipping judge scores",
            self.budget.usd_per_hour,
        )
        raise JudgeError(
            "budget",
            f"the judge's hourly cost budget (${self.budget.usd_per_hour:g}) is spent; "
            "judge scorers resume as it refills",
        )

    def _calls_spent(self) -> None:
        assert self.call_budget is not None
        throttled.warning(
            "judge_calls",
            "otel_scorers: the judge's max_calls_per_hour (%d) is reached; skipping judge scores",
            int(self.call_budget.usd_per_hour),
        )
        raise JudgeError(
            "budget",
            f"the judge's max_calls_per_hour ({int(self.call_budget.usd_per_hour)}) is reached; "
            "judge scorers resume as it refills",
        )


def _raise_with_usage(spent: Callable[[], None], consultation: Consultation) -> None:
    try:
        spent()
    except JudgeError as exc:
        exc.usage = consultation.usage()
        raise
