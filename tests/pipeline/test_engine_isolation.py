"""The engine keeps its own work to itself: its HTTP calls are not traced by the host's
instrumentations, a hung sync scorer holds only its own workers, and a slow judge holds up only
the judge lane."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from opentelemetry.instrumentation.aiohttp_client import AioHttpClientInstrumentor
from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
from pydantic import BaseModel

from otel_scorers import AgentRun, ScoringSpanProcessor, bind, checks, scorer
from otel_scorers.demos.example_agent import ExampleAgent, ScriptedRun
from otel_scorers.pipeline import scoring_pipeline
from otel_scorers.scorers import answer_relevancy, ask_judge, llm_scorer
from otel_scorers.scorers.judge import Judge, JudgeConfig
from otel_scorers.span_record import OWN_SCOPE
from otel_scorers.throttled_log import ThrottledLog

from ..conftest import Telemetry
from ..judge_server import JudgeServer, judge_server, make_judge
from ..waiting import wait_until

MODEL = "openai/test-judge"
PARIS = ScriptedRun(
    "What's the weather in Paris?", [("get_weather", {"city": "Paris"})], "Sunny, 21°C in Paris."
)
HTTP_CLIENT_SCOPES = {
    "opentelemetry.instrumentation.aiohttp_client",
    "opentelemetry.instrumentation.httpx",
}


class Verdict(BaseModel):
    verdict: str


@pytest.fixture
def server(server: JudgeServer) -> JudgeServer:
    server.responder = lambda _body: '{"verdict": "yes"}'
    return server


@pytest.fixture
def instrumented_http(telemetry: Telemetry) -> Iterator[None]:
    """The host instruments the HTTP clients litellm and user code use, as many agents do."""
    HTTPXClientInstrumentor().instrument(tracer_provider=telemetry.tracer_provider)
    AioHttpClientInstrumentor().instrument(tracer_provider=telemetry.tracer_provider)
    try:
        yield
    finally:
        HTTPXClientInstrumentor().uninstrument()
        AioHttpClientInstrumentor().uninstrument()


def http_client_spans(telemetry: Telemetry) -> list[Any]:
    return [
        span
        for span in telemetry.finished_spans()
        if span.instrumentation_scope is not None and span.instrumentation_scope.name in HTTP_CLIENT_SCOPES
    ]


def judge(server: JudgeServer, **options: Any) -> Judge:
    return make_judge(server, model=MODEL, **options)


def completion_request(server: JudgeServer) -> None:
    body = {"model": "judge", "messages": [{"role": "user", "content": "ping"}]}
    httpx.post(f"{server.url}/chat/completions", json=body, timeout=5.0).raise_for_status()


@pytest.mark.usefixtures("instrumented_http")
def test_judge_calls_and_sync_scorers_http_calls_produce_no_spans(
    telemetry: Telemetry, server: JudgeServer
) -> None:
    telemetry.export_spans_directly()
    # The instrumentations are live: the same calls made by the host are traced.
    asyncio.run(ask_judge("Relevant? JSON please.", Verdict, judge=judge(server)))
    completion_request(server)
    assert {span.instrumentation_scope.name for span in http_client_spans(telemetry)} == HTTP_CLIENT_SCOPES
    telemetry.spans.clear()

    @scorer(name="calls_out")
    def calls_out(run: AgentRun) -> bool:  # sync: runs on a worker thread
        completion_request(server)
        return True

    relevant = llm_scorer(
        "relevant", "Relevant? JSON please.", Verdict, score=lambda r: r.verdict == "yes", judge=judge(server)
    )
    processor = ScoringSpanProcessor([relevant, calls_out], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    calls_before = server.calls
    ExampleAgent(tracer=telemetry.tracer_provider.get_tracer("agent")).run(PARIS)
    assert processor.force_flush(10_000)

    assert server.calls == calls_before + 2, "the judge and the sync scorer both reached the server"
    evaluations = {
        span.name: span.attributes["gen_ai.evaluation.score.value"]
        for span in telemetry.finished_spans()
        if span.instrumentation_scope.name == OWN_SCOPE
    }
    assert evaluations == {"evaluate relevant": 1.0, "evaluate calls_out": 1.0}
    assert http_client_spans(telemetry) == []
    processor.shutdown()


def evaluations_of(telemetry: Telemetry, name: str) -> list[Any]:
    return [span for span in telemetry.finished_spans() if span.name == f"evaluate {name}"]


def overdue_calls(telemetry: Telemetry, name: str) -> float:
    points = telemetry.metric_points("otel_scorers.scorer.overdue_calls")
    return sum(point.value for point in points if point.attributes.get("gen_ai.evaluation.name") == name)


def test_hung_sync_calls_hold_only_their_own_scorers_threads_and_are_counted(
    telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    release = threading.Event()

    @scorer(name="stuck_on_a_lock", workers=4)
    def hangs(run: AgentRun) -> bool:
        release.wait(30)
        return True

    @scorer(name="quick")
    def quick(run: AgentRun) -> bool:
        return True

    processor = ScoringSpanProcessor(
        [bind(hangs, timeout_s=0.3), bind(quick, timeout_s=0.3)], **telemetry.providers()
    )
    telemetry.tracer_provider.add_span_processor(processor)
    telemetry.export_spans_directly()
    agent = ExampleAgent(tracer=telemetry.tracer_provider.get_tracer("agent"))
    try:
        with caplog.at_level(logging.WARNING, logger="otel_scorers"):
            for _ in range(6):  # six hung calls: as many threads as asyncio's default pool has here
                agent.run(PARIS)
            assert processor.force_flush(10_000)
            for _ in range(4):
                agent.run(PARIS)
            assert processor.force_flush(10_000)

        quick_results = [
            span.attributes.get("error.type", "scored") for span in evaluations_of(telemetry, "quick")
        ]
        assert quick_results == ["scored"] * 10, "the quick scorer never waited behind the hung one"
        hung_results = {
            span.attributes.get("error.type") for span in evaluations_of(telemetry, "stuck_on_a_lock")
        }
        assert hung_results == {"timeout"}
        assert overdue_calls(telemetry, "stuck_on_a_lock") == 4, (
            "each of its 4 threads is held by a hung call"
        )
        assert re.search(
            r"scorer stuck_on_a_lock: \d of its 4 worker threads held by calls still running", caplog.text
        )
    finally:
        release.set()
    wait_until(
        lambda: overdue_calls(telemetry, "stuck_on_a_lock") == 0,
        60,
        "no overdue call: a call that returns gives its thread back",
    )
    processor.shutdown()


@pytest.mark.usefixtures("litellm_imported")
def test_quick_checks_keep_flowing_past_a_slow_judge_whose_excess_work_is_dropped_and_counted(
    telemetry: Telemetry, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A log of its own: an earlier test in this process may have used the minute's one line.
    monkeypatch.setattr(scoring_pipeline, "throttled", ThrottledLog())
    with judge_server(responder=lambda _body: '{"verdict": "yes"}', latency_s=2.0) as slow_judge:
        relevant = llm_scorer(
            "relevant",
            "Relevant? JSON please.",
            Verdict,
            score=lambda r: r.verdict == "yes",
            judge=judge(slow_judge, timeout_s=5.0),
        )
        processor = ScoringSpanProcessor(
            [checks.no_tool_errors(), relevant], max_judge_runs=4, **telemetry.providers()
        )
        telemetry.tracer_provider.add_span_processor(processor)
        telemetry.export_spans_directly()
        agent = ExampleAgent(tracer=telemetry.tracer_provider.get_tracer("agent"))
        try:
            with caplog.at_level(logging.WARNING, logger="otel_scorers"):
                started = time.monotonic()
                for i in range(20):  # distinct questions: the judge's cache answers none of them
                    agent.run(
                        ScriptedRun(
                            f"Weather in Paris, day {i}?", [("get_weather", {"city": "Paris"})], "Sunny."
                        )
                    )
                wait_until(
                    lambda: len(evaluations_of(telemetry, "no_tool_errors")) >= 20,
                    max(0.0, 1.5 - (time.monotonic() - started)),
                    "every run's quick check within 1.5 s",
                )
                judged_by_then = len(evaluations_of(telemetry, "relevant"))
                assert judged_by_then == 0, "every run's quick check was out before the judge answered"
                assert processor.force_flush(10_000)
        finally:
            processor.shutdown()

    assert len(evaluations_of(telemetry, "no_tool_errors")) == 20
    judged = [
        span.attributes["gen_ai.evaluation.score.value"] for span in evaluations_of(telemetry, "relevant")
    ]
    assert judged == [1.0] * 4, "the lane held 4 runs, and those were judged"
    assert slow_judge.calls == 4
    dropped = telemetry.counter(
        "otel_scorers.evaluations",
        gen_ai__evaluation__name="relevant",
        otel_scorers__outcome="judge_lane_full",
    )
    assert dropped == 16
    lane_full = [record for record in caplog.records if "wait for the judge" in record.getMessage()]
    assert len(lane_full) == 1, "logged once, not per dropped run"


def test_a_binding_knows_whether_its_scorer_asks_a_judge() -> None:
    shared = Judge(JudgeConfig(model=MODEL))
    relevant = llm_scorer("relevant", "Relevant?", Verdict, score=lambda r: r.verdict == "yes", judge=shared)

    @scorer
    async def asks_itself(run: AgentRun) -> float:
        reply = await ask_judge("Relevant?", Verdict, judge=shared)
        return 1.0 if reply.value.verdict == "yes" else 0.0

    assert bind(relevant).uses_judge and bind(answer_relevancy(judge=shared)).uses_judge
    assert not bind(checks.no_tool_errors()).uses_judge and not bind(asks_itself).uses_judge
    assert bind(asks_itself, uses_judge=True).uses_judge, "a custom scorer that asks the judge says so"


# The misused check's coroutine is closed unawaited, as it should be: Python says so.
@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")
def test_a_quick_check_that_returns_an_awaitable_is_an_error_result_and_scoring_goes_on(
    telemetry: Telemetry,
) -> None:
    """Quick checks are scored inline, without a task per run: one that is really a coroutine
    function fails its own evaluation only."""

    async def eventually(run: AgentRun) -> Any:
        return None

    telemetry.export_spans_directly()
    odd = checks.Check("odd", eventually)  # type: ignore[arg-type]
    processor = ScoringSpanProcessor([odd, checks.no_tool_errors()], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    agent = ExampleAgent(tracer=telemetry.tracer_provider.get_tracer("agent"))
    agent.run(PARIS)
    agent.run(PARIS)
    assert processor.force_flush(10_000)
    assert [span.attributes["error.type"] for span in evaluations_of(telemetry, "odd")] == ["TypeError"] * 2
    assert [
        span.attributes["gen_ai.evaluation.score.value"]
        for span in evaluations_of(telemetry, "no_tool_errors")
    ] == [1.0] * 2
    processor.shutdown()
