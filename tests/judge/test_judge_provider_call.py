"""`ProviderCall`: one call to the scripted judge on 127.0.0.1 through litellm, its retries within
the deadline, its reservation settled with the real cost, and the breaker."""

from __future__ import annotations

import asyncio
import time

import pytest

from otel_scorers.scorers.judge.budget import CostBudget
from otel_scorers.scorers.judge.provider_call import ProviderCall
from otel_scorers.scorers.judge.spend import Spend
from otel_scorers.scorers.judge.usage import Completion, Consultation

from ..judge_server import (
    MODEL,
    JudgeServer,
    Reply,
    Status,
    count_tokens,
    judge_config,
    prompt_tokens,
    refused_url,
)
from ..waiting import FakeClock

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")
MESSAGES = [{"role": "user", "content": "Relevant? JSON."}]
PRICES = {"input_usd_per_million": 1.0, "output_usd_per_million": 2.0}


def call(provider: ProviderCall, deadline_s: float = 10.0) -> tuple[Completion | Exception, Consultation]:
    consultation = Consultation(MODEL, time.monotonic() + deadline_s)

    async def go() -> Completion | Exception:
        try:
            return await provider.complete(MESSAGES, consultation, name="verdict", schema=dict)
        except Exception as exc:
            return exc

    return asyncio.run(go()), consultation


def provider_for(url: str, **options: object) -> ProviderCall:
    config = judge_config(url, **options)
    return ProviderCall(config, Spend(config))


def test_a_5xx_is_retried_and_the_reservation_settles_at_the_real_cost(server: JudgeServer) -> None:
    reply = '{"verdict": "yes"}'
    server.then(Status(503), Reply(reply))
    provider = provider_for(server.url, prices=PRICES, cost_budget_usd_per_hour=0.001)
    # on a clock that stands still: nothing refills while the test runs, however long it takes
    provider.spend.budget = CostBudget(0.001, FakeClock())
    completion, consultation = call(provider)
    assert isinstance(completion, Completion) and completion.text == reply
    assert server.calls == 2 and consultation.calls == 1
    cost = (prompt_tokens(MESSAGES) * 1.0 + count_tokens(reply) * 2.0) / 1e6
    assert completion.cost_usd == pytest.approx(cost)
    assert provider.spend.budget is not None
    assert provider.spend.budget.pending == 0  # the failed attempt's reservation came back too
    assert provider.spend.budget.available == pytest.approx(0.001 - cost, abs=1e-6)


def test_a_judge_that_refuses_connections_opens_the_breaker() -> None:
    provider = provider_for(refused_url(), max_retries=0)
    for _ in range(5):
        call(provider)
    assert provider.breaker.open
    error, _ = call(provider)
    # refused by the breaker, at once, not by the server after a connection attempt
    assert isinstance(error, Exception) and "circuit breaker open" in str(getattr(error, "cause", ""))
