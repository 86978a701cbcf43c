"""`Spend`: each call reserves the most it can cost before it is sent, and settles with what it
cost. Prices from the config, so the expected figures are worked out here by hand."""

from __future__ import annotations

import asyncio
import time

import pytest

from otel_scorers.scorers.judge import JudgeConfig, JudgeError, import_litellm
from otel_scorers.scorers.judge.budget import CostBudget
from otel_scorers.scorers.judge.spend import Spend
from otel_scorers.scorers.judge.usage import Consultation

from ..waiting import FakeClock

MODEL = "openai/my-local-judge"
# $1 per million input tokens, $2 per million output tokens
PRICES = {"input_usd_per_million": 1.0, "output_usd_per_million": 2.0}
MESSAGES = [{"role": "user", "content": "Is it relevant? Reply in JSON."}]


def spend(**options: object) -> Spend:
    return Spend(JudgeConfig(model=MODEL, prices=PRICES, **options))  # type: ignore[arg-type]


def request(max_tokens: int) -> dict[str, object]:
    return {"messages": MESSAGES, "max_tokens": max_tokens}


def consultation(deadline_s: float = 5.0) -> Consultation:
    return Consultation(MODEL, time.monotonic() + deadline_s)


def test_a_call_reserves_its_prompt_and_its_whole_output_bound_then_settles_what_it_cost() -> None:
    litellm = import_litellm()
    the_spend = spend(cost_budget_usd_per_hour=0.01)
    # on a clock that stands still: nothing refills while the test runs, however long it takes
    the_spend.budget = CostBudget(0.01, FakeClock())
    prompt = int(litellm.token_counter(model=MODEL, messages=MESSAGES))
    reserved = asyncio.run(the_spend.reserve(litellm, MODEL, request(1000), consultation()))
    assert reserved == pytest.approx((prompt * 1.0 + 1000 * 2.0) / 1e6)
    assert the_spend.budget is not None
    assert the_spend.budget.available == pytest.approx(0.01 - reserved, abs=1e-8)
    the_spend.settle(reserved, 0.0001)  # the reply was short: the rest comes back
    assert the_spend.budget.available == pytest.approx(0.01 - 0.0001, abs=1e-8)


def test_a_call_expected_to_cost_more_than_the_whole_budget_is_refused() -> None:
    litellm = import_litellm()
    the_spend = spend(cost_budget_usd_per_hour=1e-6)  # less than the prompt and a short reply
    with pytest.raises(JudgeError, match="more than the whole hourly budget") as raised:
        asyncio.run(the_spend.reserve(litellm, MODEL, request(256), consultation()))
    assert raised.value.type == "budget"


def test_a_call_that_does_not_fit_waits_for_the_calls_in_flight_to_give_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    litellm = import_litellm()
    # less than one call's whole bound (~$0.002): a call is admitted while something is left
    the_spend = spend(cost_budget_usd_per_hour=0.0015)
    first = asyncio.run(the_spend.reserve(litellm, MODEL, request(1000), consultation()))
    budget = the_spend.budget
    assert budget is not None
    reserve = budget.reserve
    refusals = 0

    async def second() -> float:
        refused_twice = asyncio.Event()

        def counted(amount: float) -> bool:
            nonlocal refusals
            taken = reserve(amount)
            refusals += not taken
            if refusals == 2:
                refused_twice.set()
            return taken

        monkeypatch.setattr(budget, "reserve", counted)
        waiting = asyncio.ensure_future(the_spend.reserve(litellm, MODEL, request(1000), consultation()))
        await asyncio.wait_for(refused_twice.wait(), 60)  # it asked, and asked again after a while
        assert not waiting.done()  # the first still holds its reservation
        the_spend.settle(first, 0.00002)  # and gives most of it back
        return await waiting

    assert asyncio.run(second()) == pytest.approx(first)


def test_the_call_cap_counts_every_call_sent() -> None:
    litellm = import_litellm()
    the_spend = spend(max_calls_per_hour=2)
    for _ in range(2):
        the_spend.settle(asyncio.run(the_spend.reserve(litellm, MODEL, request(256), consultation())), None)
    with pytest.raises(JudgeError, match="max_calls_per_hour"):
        the_spend.check()
