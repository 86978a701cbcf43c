"""`SingleFlight`: an identical question is computed once, whoever asks it and when."""

from __future__ import annotations

import asyncio

import pytest

from otel_scorers.scorers.judge.cache import BoundedCache
from otel_scorers.scorers.judge.single_flight import SingleFlight


def test_identical_questions_at_the_same_time_are_computed_once() -> None:
    flights = SingleFlight(BoundedCache(8))
    computed = 0

    async def compute() -> str:
        nonlocal computed
        computed += 1
        await asyncio.sleep(0.01)
        return "yes"

    async def five() -> list[tuple[str, bool]]:
        return await asyncio.gather(*(flights.once("q", compute) for _ in range(5)))

    results = asyncio.run(five())
    assert computed == 1
    assert sorted(was_shared for _, was_shared in results) == [False, True, True, True, True]
    assert {value for value, _ in results} == {"yes"}
    assert asyncio.run(flights.once("q", compute)) == ("yes", True) and computed == 1  # from the cache


def test_when_the_first_fails_the_others_compute_on_their_own() -> None:
    flights = SingleFlight(BoundedCache(0))  # nothing cached: each success is its own
    attempts = 0

    async def compute() -> str:
        nonlocal attempts
        attempts += 1
        await asyncio.sleep(0.01)
        if attempts == 1:
            raise RuntimeError("the judge failed")
        return "yes"

    async def three() -> list[object]:
        return await asyncio.gather(*(flights.once("q", compute) for _ in range(3)), return_exceptions=True)

    results = asyncio.run(three())
    assert isinstance(results[0], RuntimeError)
    assert results[1:] == [("yes", False), ("yes", False)]  # each waiting caller asked on its own
    assert attempts == 3


def test_a_failure_is_not_cached() -> None:
    flights = SingleFlight(BoundedCache(8))

    async def fails() -> str:
        raise ValueError("no")

    with pytest.raises(ValueError):
        asyncio.run(flights.once("q", fails))
    assert len(flights.cache) == 0


def test_the_judge_keeps_no_run_s_text_once_it_is_scored() -> None:
    """A question's key holds the judged texts; the cache keeps a digest of it, so scoring a file's
    runs one after another holds none of their texts afterwards (it held every one of the last
    `cache_size`: 1,024 runs of a megabyte each, a gigabyte). The same question is still answered
    from the cache."""
    import gc
    import json
    import tracemalloc

    from pydantic import BaseModel

    from otel_scorers import AgentRun, Score, bind
    from otel_scorers.pipeline.scorer_call import evaluate
    from otel_scorers.scorers.judge import Judge, JudgeConfig, import_litellm
    from otel_scorers.scorers.llm import llm_scorer

    from ..judge_server import judge_server

    class Verdict(BaseModel):
        ok: bool
        reason: str

    import_litellm()

    def run(n: int) -> AgentRun:
        """Run `n`, made when it is scored and let go after, as `score` reads a file's runs."""
        answer = f"{n} " + "fine weather " * 20_000  # 260 kB, each its own
        return AgentRun(trace_id=n + 1, span_id=1, agent_name="a", input="q", output=answer)

    async def scored(run: AgentRun) -> Score:
        return await evaluate(binding, run)  # type: ignore[misc]

    with judge_server(lambda _body: json.dumps({"ok": True, "reason": "fine"})) as server:
        judge = Judge(JudgeConfig(model="openai/gpt-4o-mini", api_base=server.url, api_key="k", redact=False))
        scorer = llm_scorer("ok", "Is it fine?", Verdict, score=lambda r: r.ok, judge=judge)
        binding = bind(scorer)
        asyncio.run(scored(run(0)))  # the client loaded, the first allocations made
        gc.collect()
        sent = len(server.requests)
        server.requests.clear()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for n in range(1, 30):
                assert asyncio.run(scored(run(n))).value == 1.0
                sent += len(server.requests)
                server.requests.clear()  # the test's server keeps what it received: not ours
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        again = asyncio.run(scored(run(5)))
        assert again.details is not None and again.details["cached"] is True
        assert sent + len(server.requests) == 30
    texts = sum(len(run(n).output or "") for n in range(1, 30))
    print(f"held {held / 1e6:.1f} MB after scoring {texts / 1e6:.1f} MB of answers")
    assert held < texts / 10, (held, texts)
