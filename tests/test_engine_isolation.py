"""The engine keeps its own work to itself: its HTTP calls are not traced by the host's
instrumentations, a hung sync scorer holds only its own workers, and a slow judge holds up only
the judge lane."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from opentelemetry.instrumentation.aiohttp_client import AioHttpClientInstrumentor
from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
from pydantic import BaseModel

from otel_scorers import AgentRun, ScoringSpanProcessor, scorer
from otel_scorers.example_agent import ExampleAgent, ScriptedRun
from otel_scorers.scorers import ask_judge, llm_scorer
from otel_scorers.scorers.judge import Judge, JudgeConfig, import_litellm
from otel_scorers.span_record import OWN_SCOPE

from .conftest import Telemetry
from .judge_server import JudgeServer, judge_server

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


@pytest.fixture(scope="module", autouse=True)
def litellm_imported() -> None:
    import_litellm()


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with judge_server(responder=lambda _body: '{"verdict": "yes"}') as running:
        yield running


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


def judge(server: JudgeServer) -> Judge:
    return Judge(JudgeConfig(model=MODEL, api_base=server.url, api_key="test-key", timeout_s=5.0))


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
