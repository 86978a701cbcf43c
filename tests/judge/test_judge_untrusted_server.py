"""The judge is an untrusted server: its reply is bounded in bytes and time while it is read, a
redirect to another host or port is not followed, and a cost budget holds for every model and
for the last call. Through the public surface (`ask_judge`, the scorers, `JudgeConfig`), with
litellm making real HTTP calls to the scripted judge on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from typing import Any

import pytest
from pydantic import BaseModel

from otel_scorers import AgentRun, Score, scorers
from otel_scorers.model import ContextItem
from otel_scorers.scorers.judge import JudgeConfig, JudgeError, import_litellm
from otel_scorers.scorers.llm import ask_judge

from ..judge_server import (
    MODEL,
    Body,
    Flood,
    JudgeServer,
    Redirect,
    Reply,
    completion_body,
    count_tokens,
    judge_server,
    make_judge,
    prompt_tokens,
)

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")
#: A model litellm has no price for.
UNPRICED = "openai/my-local-judge"


class Verdict(BaseModel):
    verdict: str
    reason: str = ""


def ask(judge: Any, answer: str = "Sunny.") -> Any:
    """The judge's verdict on `answer`, or the `JudgeError` it raised."""

    async def go() -> Any:
        try:
            return (await ask_judge("Relevant? JSON.", Verdict, data={"answer": answer}, judge=judge)).value
        except JudgeError as exc:
            return exc

    return asyncio.run(go())


# ---- a reply is bounded in bytes and time while it is read -------------------------------------


def test_a_streamed_reply_past_its_byte_bound_is_cut_off_before_anything_parses_it(
    server: JudgeServer,
) -> None:
    server.then(Flood(50_000_000))  # 50 MB, no declared length
    judge = make_judge(server, timeout_s=8.0)
    error = ask(judge)
    calls = server.calls
    server.then(Flood(50_000_000))  # again, its memory measured
    tracemalloc.start()
    try:
        ask(judge)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(error, JudgeError) and error.type == "judge_invalid_response"
    assert "past the bound for its output tokens" in error.message
    # cut off by its bound, not read until the deadline; the same reply again would be refused
    # again: no retry, no repair
    assert calls == 1
    assert peak < 10_000_000, f"reading the reply took {peak / 1e6:.0f} MB"


def test_a_declared_length_past_the_bound_is_refused_at_once(server: JudgeServer) -> None:
    server.then(Flood(5_000_000, declared=True))
    error = ask(make_judge(server))
    assert isinstance(error, JudgeError) and error.type == "judge_invalid_response"
    assert "5,000,000 bytes long" in error.message


def test_a_valid_reply_of_a_million_verdicts_is_refused_not_scored(server: JudgeServer) -> None:
    """A reply of the right shape is still bounded: its output bound (1,024 tokens for a list)
    cannot have produced it. 200,000 verdicts here (the attack used 10^6), 13 MB, read into at
    most the bound (before: all of it, and parsed)."""
    units = [{"text": f"claim {n}", "verdict": "yes", "reason": "r"} for n in range(200_000)]
    server.then(Body(completion_body(json.dumps({"units": units, "reason": "all true"}))))
    context = (ContextItem("Paris: sunny, 21°C", "tool_result", "get_weather"),)
    run = AgentRun(0xABC, 0x1, "travel", "Weather in Paris?", "Sunny, 21°C.", context=context, start_ns=10)
    faithfulness = scorers.faithfulness(judge=make_judge(server, timeout_s=8.0))
    del units
    tracemalloc.start()
    try:
        result: Score = asyncio.run(faithfulness.score(run))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.value is None and result.error is not None
    assert result.error.type == "judge_invalid_response" and "bytes" in result.error.message
    assert peak < 10_000_000, f"reading the reply took {peak / 1e6:.0f} MB"


def test_a_reply_within_its_bound_is_read_as_ever(server: JudgeServer) -> None:
    server.then(Reply(json.dumps({"verdict": "yes", "reason": "x" * 20_000})))  # 20 kB: an honest, long reply
    assert ask(make_judge(server)) == Verdict(verdict="yes", reason="x" * 20_000)


# ---- redirects -------------------------------------------------------------------------------------


def test_a_redirect_to_another_port_is_not_followed(server: JudgeServer) -> None:
    with judge_server(lambda _body: '{"verdict": "no", "reason": "the other server"}') as other:
        server.then(Redirect(f"{other.url}/chat/completions"))
        error = ask(make_judge(server))
        assert other.calls == 0, "the other server's verdict would have become the score"
    assert isinstance(error, JudgeError) and error.type == "judge_error"
    assert "redirect" in error.message and other.url.rsplit(":", 1)[1].split("/")[0] in error.message
    assert server.calls == 1  # not retried


def test_a_redirect_on_the_same_server_is_followed(server: JudgeServer) -> None:
    server.then(Redirect(f"{server.url}/chat/completions"), Reply('{"verdict": "yes"}'))
    assert ask(make_judge(server)) == Verdict(verdict="yes")


# ---- a cost budget binds in Python as in the config file ---------------------------------------


def test_a_cost_budget_on_a_model_nobody_prices_is_refused_in_python(server: JudgeServer) -> None:
    with pytest.raises(ValueError, match="cost_budget_usd_per_hour") as raised:
        JudgeConfig(model=UNPRICED, api_base="http://127.0.0.1:1/v1", cost_budget_usd_per_hour=1e-6)
    assert "litellm has no price for openai/my-local-judge" in str(raised.value)
    # a scorer naming its own unpriced model meets the same rule: an error, and no call
    scorer = scorers.answer_relevancy(
        model=UNPRICED, judge=make_judge(server, model=None, cost_budget_usd_per_hour=1e-6)
    )
    run = AgentRun(0xABC, 0x1, "travel", "Weather in Paris?", "Sunny, 21°C.", start_ns=10)
    result: Score = asyncio.run(scorer.score(run))
    assert result.error is not None and result.error.type == "judge_error"
    assert "litellm has no price for openai/my-local-judge" in result.error.message
    assert server.calls == 0
    # with prices, or with calls capped instead, it holds
    prices = {"input_usd_per_million": 1.0, "output_usd_per_million": 2.0}
    JudgeConfig(model=UNPRICED, cost_budget_usd_per_hour=1e-6, prices=prices)
    JudgeConfig(model=UNPRICED, max_calls_per_hour=10)


def test_the_config_file_refuses_it_with_the_same_words() -> None:
    from otel_scorers.config import parse_config
    from otel_scorers.errors import ConfigError

    with pytest.raises(ConfigError) as raised:
        parse_config(
            {
                "scorers": [{"type": "answer_relevancy", "args": {"model": UNPRICED}}],
                "judge": {"model": MODEL, "cost_budget_usd_per_hour": 1e-6},
            }
        )
    assert [error.path for error in raised.value.errors] == ["judge.cost_budget_usd_per_hour"]
    assert "litellm has no price for openai/my-local-judge" in raised.value.message
    assert "give judge.prices" in raised.value.message


# ---- the budget's last call ------------------------------------------------------------------------


def test_fifty_concurrent_scores_against_a_budget_for_forty_send_at_most_forty_one(
    server: JudgeServer,
) -> None:
    """Replies vary: a short one first, then long ones. Whatever the replies so far, a call in
    flight holds at least what it will cost, so the budget is overspent by less than one call."""
    litellm = import_litellm()
    short = '{"verdict": "yes"}'
    long = json.dumps({"verdict": "yes", "reason": "it answers the question " * 38})  # ~200 tokens
    server.latency_s = 0.05
    server.responder = lambda body: short if "warm-up" in json.dumps(body) else long

    def cost(body: dict[str, Any], reply: str) -> float:
        return float(
            sum(
                litellm.cost_per_token(
                    model=MODEL,
                    prompt_tokens=prompt_tokens(body["messages"]),
                    completion_tokens=count_tokens(reply),
                )
            )
        )

    probe = make_judge(server, cache_size=0)
    ask(probe, "probe 00")
    one_call = cost(server.requests[-1].body, long)
    warm_up_body: dict[str, Any] = {}
    budget = 40 * one_call
    judge = make_judge(server, cost_budget_usd_per_hour=budget, cache_size=0, concurrency=50)
    ask(judge, "warm-up")  # a short reply: what a call reserved after it was what replies had cost
    warm_up_body = server.requests[-1].body
    judge.budget.spend(-cost(warm_up_body, short))  # type: ignore[union-attr]  # the hour is for the fifty

    async def fifty() -> list[Any]:
        async def one(n: int) -> Any:
            try:
                return await ask_judge(
                    "Relevant? JSON.", Verdict, data={"answer": f"probe {n:02d}"}, judge=judge
                )
            except JudgeError as exc:
                return exc

        return await asyncio.gather(*(one(n) for n in range(50)))

    before = server.calls
    results = asyncio.run(fifty())
    sent = server.calls - before
    assert sent <= 41, f"{sent} calls went out against a budget for 40"
    assert sent >= 36  # and the budget was spent, not refused with most of it left
    assert all(r.type == "budget" for r in results if isinstance(r, JudgeError))
    spent = budget - judge.budget.available  # type: ignore[union-attr]
    assert spent <= budget + one_call * 1.05


def _usage_reply(tokens: Any) -> bytes:
    usage = {"prompt_tokens": tokens, "completion_tokens": tokens, "total_tokens": 0}
    if tokens == "absent":
        usage = {}
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": '{"verdict": "yes"}'},
        "finish_reason": "stop",
    }
    document = {"id": "x", "object": "chat.completion", "created": 1, "model": "judge", "choices": [choice]}
    return json.dumps({**document, "usage": usage}).encode()


@pytest.mark.parametrize("tokens", [-(10**9), -1, 0, None, "absent"])
def test_a_judge_reporting_negative_or_no_tokens_still_spends_the_cost_budget(
    server: JudgeServer, tokens: Any
) -> None:
    # Priced as reported, -10⁹ tokens gave $2,000,000 back a call and none cost nothing: every one
    # of the 30 questions was sent against a budget that an honest reply spends in one call.
    server.then(*[Body(_usage_reply(tokens)) for _ in range(30)])
    prices = {"input_usd_per_million": 1000.0, "output_usd_per_million": 1000.0}
    judge = make_judge(server, model=UNPRICED, cost_budget_usd_per_hour=0.5, prices=prices, cache_size=0)
    outcomes = [ask(judge, f"answer {n}") for n in range(30)]
    assert server.calls <= 3
    assert [outcome.type for outcome in outcomes if isinstance(outcome, JudgeError)] == ["budget"] * (
        30 - server.calls
    )
