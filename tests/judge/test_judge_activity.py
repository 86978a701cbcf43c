"""The judge's own work as metrics, from a real judge server over HTTP: each provider call's
duration by model and outcome, the calls out and waiting for a slot while they are, and the
connection breaker's state."""

from __future__ import annotations

import socket

from pydantic import BaseModel

from otel_scorers import ScoringSpanProcessor
from otel_scorers.demos.example_agent import ExampleAgent, ScriptedRun
from otel_scorers.scorers import llm_scorer
from otel_scorers.scorers.judge.breaker import THRESHOLD

from ..conftest import Telemetry
from ..judge_server import MODEL, JudgeServer, judge_server, make_judge
from ..waiting import wait_until


class Verdict(BaseModel):
    verdict: str


def relevant(judge_at: JudgeServer | str, **options: object) -> object:
    return llm_scorer(
        "relevant",
        "Relevant? JSON please.",
        Verdict,
        score=lambda reply: reply.verdict == "yes",
        judge=make_judge(judge_at, **options),
    )


def gauge(telemetry: Telemetry, name: str) -> float:
    return sum(point.value for point in telemetry.metric_points(name))


def run_agent(telemetry: Telemetry, runs: int) -> None:
    agent = ExampleAgent(tracer=telemetry.tracer_provider.get_tracer("agent"))
    for i in range(runs):  # distinct questions: the judge's cache answers none of them
        agent.run(ScriptedRun(f"Weather in Paris, day {i}?", [("get_weather", {"city": "Paris"})], "Sunny."))


def test_calls_out_and_waiting_are_gauges_and_each_call_is_timed_by_model_and_outcome(
    telemetry: Telemetry, litellm_imported: None
) -> None:
    with judge_server(responder=lambda _body: '{"verdict": "yes"}', latency_s=0.3) as slow:
        processor = ScoringSpanProcessor([relevant(slow, concurrency=1)], **telemetry.providers())
        telemetry.tracer_provider.add_span_processor(processor)
        run_agent(telemetry, 3)
        wait_until(
            lambda: (
                slow.calls == 1
                and gauge(telemetry, "otel_scorers.judge.calls.in_flight") == 1
                and gauge(telemetry, "otel_scorers.judge.calls.queued") == 2
            ),
            60,
            "the first call out and the two others waiting for the one slot",
        )
        assert processor.force_flush(30_000)
        processor.shutdown()
    assert slow.calls == 3
    assert gauge(telemetry, "otel_scorers.judge.calls.in_flight") == 0
    assert gauge(telemetry, "otel_scorers.judge.calls.queued") == 0
    (point,) = telemetry.metric_points("otel_scorers.judge.call.duration")
    assert dict(point.attributes) == {"gen_ai.request.model": MODEL, "otel_scorers.outcome": "ok"}
    assert point.count == 3 and point.min >= 0.25, "each call took the server's 0.3 s"
    (breaker,) = telemetry.metric_points("otel_scorers.judge.breaker.open")
    assert breaker.value == 0


def test_a_refused_connection_is_timed_as_such_and_the_open_breaker_is_a_gauge(
    telemetry: Telemetry, litellm_imported: None
) -> None:
    with socket.socket() as closed:  # a port nothing listens on: each connection is refused
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    processor = ScoringSpanProcessor([relevant(url, max_retries=0)], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    run_agent(telemetry, THRESHOLD + 2)
    assert processor.force_flush(30_000)
    processor.shutdown()
    outcomes = {
        point.attributes["otel_scorers.outcome"]: point.count
        for point in telemetry.metric_points("otel_scorers.judge.call.duration")
    }
    assert outcomes.get("ok") is None and sum(outcomes.values()) >= THRESHOLD
    (breaker,) = telemetry.metric_points("otel_scorers.judge.breaker.open")
    assert breaker.value == 1 and dict(breaker.attributes) == {"gen_ai.request.model": MODEL}
