"""The judge at its edges, with litellm talking over real HTTP to a scripted OpenAI-compatible
server on 127.0.0.1: the prompt bound (repair rounds included), budgets that hold for every
model and do not refuse early, one deadline and at most N + 1 calls for a batch of N, and a
judge that refuses connections failing fast."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest
from pydantic import BaseModel

from otel_scorers import AgentRun, ContextItem, Score, bind, scorers
from otel_scorers.pipeline.scorer_call import evaluate
from otel_scorers.pipeline.scoring_pipeline import score_run
from otel_scorers.scorers.judge import Judge, JudgeError, import_litellm
from otel_scorers.scorers.judge.breaker import COOLDOWN_S, Breaker
from otel_scorers.scorers.llm import ask_judge

from ..judge_server import (
    MODEL,
    JudgeServer,
    Reply,
    Request,
    Stall,
    count_tokens,
    prompt_tokens,
    refused_url,
)
from ..judge_server import (
    make_judge as judge,
)
from ..waiting import FakeClock

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")

RUN = AgentRun(
    trace_id=0xABC,
    span_id=0x1,
    agent_name="travel",
    input="What's the weather in Paris?",
    output="It is sunny and 21°C in Paris.",
    context=(ContextItem("Paris: sunny, 21°C", "tool_result", "get_weather"),),
    start_ns=10,
)
CLAIMS = json.dumps({"units": [{"text": "It is sunny.", "verdict": "yes", "reason": "r"}], "reason": "why"})


class Verdict(BaseModel):
    verdict: str
    reason: str = ""


def score(scorer: Any, run: AgentRun = RUN) -> Score:
    result = evaluate(bind(scorer, timeout_s=60.0), run)
    return result if isinstance(result, Score) else asyncio.run(result)  # type: ignore[arg-type]


def chars(request: Request) -> int:
    return sum(len(str(message.get("content", ""))) for message in request.body["messages"])


# ---- the prompt bound -----------------------------------------------------------------------


def test_a_5_mb_answer_goes_out_within_the_bound_and_so_does_its_repair_round(server: JudgeServer) -> None:
    server.then(Reply("not JSON at all"), Reply("still not JSON"))
    bound = 4_000  # tokens: 12,000 characters at the bound's 3 a token
    run = replace(RUN, output="The weather is fine. " * 250_000)  # 5.25 MB
    result = score(scorers.faithfulness(judge=judge(server.url, max_prompt_tokens=bound)), run)
    assert result.error is not None and result.error.type == "judge_invalid_response"
    assert server.calls == 2
    assert all(chars(request) <= bound * 3 for request in server.requests)
    assert "more characters]" in server.requests[0].text  # the cut is marked for the judge


def test_a_thousand_20_kb_tool_results_make_one_bounded_request_keeping_the_first_and_last(
    server: JudgeServer,
) -> None:
    server.then(Reply(CLAIMS))
    results = tuple(
        ContextItem(f"result {n:04d}: " + "x" * 20_000, "tool_result", f"tool_{n}") for n in range(1000)
    )
    result = score(scorers.faithfulness(judge=judge(server.url)), replace(RUN, context=results))
    assert result.value == 1.0 and server.calls == 1
    request = server.requests[0]
    assert chars(request) <= 16_000 * 3  # the default bound
    assert "result 0000" in request.text and "result 0999" in request.text
    assert "result 0500" not in request.text and "blocks left out to fit the prompt bound" in request.text


def test_the_bound_is_shared_fairly_a_huge_answer_does_not_crowd_out_question_and_context(
    server: JudgeServer,
) -> None:
    server.responder = lambda _body: "not the reply asked for"
    documents = tuple(
        ContextItem(f"document {n}: " + "fact " * 100, "document", f"doc-{n}") for n in range(3)
    )
    run = replace(RUN, input="Which " + "question " * 60, output="answer " * 100_000, context=documents)
    score(scorers.context_relevance(judge=judge(server.url, max_prompt_tokens=4_000)), run)
    text = server.requests[0].text
    assert json.dumps(run.input) in text  # needed less than a fair share: whole
    assert all(json.dumps(f"[document: {d.source}] {d.text}") in text for d in documents)
    assert "more characters]" in text and text.count("answer ") < 3_000


# ---- budgets --------------------------------------------------------------------------------


def test_a_call_expected_to_cost_more_than_the_whole_budget_is_refused_and_not_sent(
    server: JudgeServer,
) -> None:
    run = replace(RUN, output="The weather is fine. " * 200_000)  # 4.2 MB: about $0.15 at gpt-4o-mini's price
    the_judge = judge(server.url, cost_budget_usd_per_hour=0.01, max_prompt_tokens=2_000_000)
    result = score(scorers.faithfulness(judge=the_judge), run)
    assert result.skipped is not None and "more than the whole hourly budget" in result.skipped
    assert server.calls == 0


def test_configured_prices_make_a_budget_hold_for_a_model_litellm_cannot_price(server: JudgeServer) -> None:
    server.responder = lambda _body: json.dumps({"verdict": "yes", "reason": "long " * 600})
    prices = {"input_usd_per_million": 1000.0, "output_usd_per_million": 1000.0}  # a reply costs ~$0.6
    local = judge(server.url, model="openai/my-local-judge", cost_budget_usd_per_hour=0.5, prices=prices)

    async def ten() -> list[Any]:
        outcomes = []
        for n in range(10):
            try:
                outcomes.append(await ask_judge("JSON?", Verdict, data={"answer": f"a{n}"}, judge=local))
            except JudgeError as exc:
                outcomes.append(exc)
        return outcomes

    outcomes = asyncio.run(ten())
    assert server.calls == 1
    assert [o.type for o in outcomes[1:] if isinstance(o, JudgeError)] == ["budget"] * 9
    assert outcomes[0].usage.cost_usd == pytest.approx(
        (prompt_tokens(server.requests[0].body["messages"]) + count_tokens(server.responder({}))) * 1000 / 1e6
    )


def test_max_calls_per_hour_caps_the_calls_whatever_they_cost(server: JudgeServer) -> None:
    server.responder = lambda _body: '{"verdict": "yes"}'
    capped = judge(server.url, model="openai/my-local-judge", max_calls_per_hour=3)

    async def ten() -> list[str]:
        kinds = []
        for n in range(10):
            try:
                await ask_judge("JSON?", Verdict, data={"answer": f"a{n}"}, judge=capped)
                kinds.append("sent")
            except JudgeError as exc:
                kinds.append(exc.type)
        return kinds

    assert asyncio.run(ten()) == ["sent"] * 3 + ["budget"] * 7
    assert server.calls == 3


def test_fifty_concurrent_scores_spend_the_budget_instead_of_refusing_with_most_of_it_left(
    server: JudgeServer,
) -> None:
    """Each call reserves what replies like it have cost, not a fixed 400 output tokens."""
    server.latency_s = 0.05
    server.responder = lambda _body: '{"verdict": "yes", "reason": "it answers the question that was asked"}'
    litellm = import_litellm()
    asyncio.run(ask_judge("Relevant? JSON.", Verdict, data={"answer": "probe 00"}, judge=judge(server.url)))
    body = server.requests[-1].body
    one_call = sum(
        litellm.cost_per_token(
            model=MODEL,
            prompt_tokens=prompt_tokens(body["messages"]),
            completion_tokens=count_tokens(server.responder(body)),
        )
    )
    budget = one_call * 40
    the_judge = judge(server.url, cost_budget_usd_per_hour=budget, cache_size=0)

    async def fifty() -> list[Any]:
        async def one(n: int) -> Any:
            try:
                return await ask_judge(
                    "Relevant? JSON.", Verdict, data={"answer": f"probe {n:02d}"}, judge=the_judge
                )
            except JudgeError as exc:
                return exc

        return await asyncio.gather(*(one(n) for n in range(50)))

    before = server.calls
    asyncio.run(fifty())
    sent = server.calls - before
    spent = budget - the_judge.budget.available  # type: ignore[union-attr]
    assert 36 <= sent <= 41
    assert spent <= budget + one_call * 1.1  # at most one call over


# ---- batches: one deadline, at most N + 1 calls ---------------------------------------------


def batch_of(the_judge: Judge) -> list[Any]:
    return [
        bind(scorers.faithfulness(judge=the_judge), timeout_s=60.0),
        bind(scorers.toxicity(judge=the_judge), timeout_s=60.0),
        bind(scorers.bias(judge=the_judge), timeout_s=60.0),
        bind(scorers.hallucination(judge=the_judge), timeout_s=60.0),
        bind(scorers.answer_relevancy(judge=the_judge), timeout_s=60.0),
    ]


def test_a_hanging_judge_costs_a_batched_run_one_deadline_not_two(server: JudgeServer) -> None:
    server.responder = lambda _body: CLAIMS
    server.then(*[Stall(30.0)] * 20)
    the_judge = judge(server.url, batch=True, timeout_s=1.5, max_retries=0)
    results = asyncio.run(score_run(batch_of(the_judge)[:3], RUN))
    assert all(r.error is not None and r.error.type == "timeout" for r in results)
    # The batch's call, and no other: before, each scorer fell back to a call of its own once
    # the batch's deadline had passed, and waited out its own deadline again.
    assert server.calls == 1


def test_a_garbage_batch_reply_costs_at_most_one_call_more_than_the_scorers(server: JudgeServer) -> None:
    server.responder = lambda _body: "I cannot comply with that request."
    bindings = batch_of(judge(server.url, batch=True))
    results = asyncio.run(score_run(bindings, RUN))
    assert server.calls <= len(bindings) + 1  # before: 12 calls for 5 scores
    assert all(r.error is not None and r.error.type == "judge_invalid_response" for r in results)


def test_answer_relevancy_joins_the_batch_of_its_run(server: JudgeServer) -> None:
    relevancy = {"statements": [{"statement": "It is sunny.", "verdict": "yes"}], "explanation": "on topic"}
    server.then(Reply(json.dumps({"faithfulness": json.loads(CLAIMS), "answer_relevancy": relevancy})))
    the_judge = judge(server.url, batch=True)
    bindings = [bind(scorers.faithfulness(judge=the_judge)), bind(scorers.answer_relevancy(judge=the_judge))]
    results = {s.scorer: s for s in asyncio.run(score_run(bindings, RUN))}
    assert server.calls == 1
    assert results["answer_relevancy"].value == 1.0
    assert results["answer_relevancy"].details["batched_with"] == ["faithfulness"]


# ---- a judge that refuses connections -------------------------------------------------------


def test_512_scores_against_a_refused_judge_fail_fast_as_unavailable_not_as_timeouts() -> None:
    refused = judge(refused_url(), timeout_s=20.0)

    async def many() -> list[Any]:
        async def one(n: int) -> Any:
            try:
                return await ask_judge("JSON?", Verdict, data={"answer": f"a{n}"}, judge=refused)
            except JudgeError as exc:
                return exc

        return await asyncio.gather(*(one(n) for n in range(512)))

    outcomes = asyncio.run(many())
    kinds = {o.type for o in outcomes if isinstance(o, JudgeError)}
    # None waited out its deadline: before, 489 of 512 were timeouts, at 20.1 s.
    assert kinds == {"judge_unavailable"} and len(outcomes) == 512
    assert refused.breaker.shed > 400  # failed at once, counted


def test_the_breaker_closes_again_once_the_judge_answers(server: JudgeServer) -> None:
    server.responder = lambda _body: '{"verdict": "yes"}'
    the_judge = judge(refused_url(), max_retries=0)

    async def ask(n: int) -> Any:
        try:
            return await ask_judge("JSON?", Verdict, data={"answer": f"a{n}"}, judge=the_judge)
        except JudgeError as exc:
            return exc

    clock = FakeClock()
    the_judge.provider.breaker = Breaker(clock)
    for n in range(6):
        asyncio.run(ask(n))
    assert the_judge.breaker.open
    # the judge comes back where the scorers point (same judge object, new address)
    the_judge.config = the_judge.config.model_copy(update={"api_base": server.url})
    clock.now = COOLDOWN_S - 0.01
    refused = asyncio.run(ask(98))
    assert isinstance(refused, JudgeError) and refused.type == "judge_unavailable", "not before the cool-down"
    assert server.calls == 0
    clock.now = COOLDOWN_S  # the first cool-down is over
    reply = asyncio.run(ask(99))
    assert not isinstance(reply, JudgeError) and not the_judge.breaker.open
