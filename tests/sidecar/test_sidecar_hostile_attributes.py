"""Hostile attribute values sent to the sidecar by a real SDK exporter over OTLP/HTTP: NaN and
infinite token counts, a tool result and run metadata of JSON nested thousands of levels. Each
run is still scored by every scorer, and so is the good run sent in the same request."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers.span_record import OWN_SCOPE
from tests.otlp_capture import OtlpCapture, attrs
from tests.sidecar_harness import SCORERS, RunningSidecar, sidecar_document

DEEP = "[" * 1_000 + "]" * 1_000  # JSON orjson decodes: deeper than Python's 1,000 frames
RUNS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    # agent name: (run span's extra attributes, tool span's extra attributes)
    "nan-tokens": ({"gen_ai.usage.input_tokens": math.nan, "gen_ai.usage.output_tokens": math.inf}, {}),
    "deep-result": ({}, {"gen_ai.tool.call.arguments": DEEP, "gen_ai.tool.call.result": DEEP}),
    "deep-metadata": ({"metadata": '{"thread_id":' + '{"a":' * 5_000 + "1" + "}" * 5_001}, {}),
    "good": ({}, {}),
}


@pytest.fixture(scope="module")
def capture() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


def send(url: str) -> dict[bytes, str]:
    """Every run's spans in one request; the run spans' ids and agents."""
    seen = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(seen))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url), schedule_delay_millis=50))
    tracer = provider.get_tracer("weather-agent")
    for agent, (run_extra, tool_extra) in RUNS.items():
        with (
            tracer.start_as_current_span(
                f"invoke_agent {agent}",
                attributes={
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": agent,
                    "gen_ai.input.messages": json.dumps([{"role": "user", "content": "weather?"}]),
                    "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": "Sunny."}]),
                    **run_extra,
                },
            ),
            tracer.start_as_current_span(
                "execute_tool get_weather",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "get_weather",
                    "gen_ai.tool.call.id": "call-1",
                    **tool_extra,
                },
            ),
        ):
            pass
    provider.shutdown()  # one request: the batch of every run's spans
    return {
        span.context.span_id.to_bytes(8, "big"): str((span.attributes or {})["gen_ai.agent.name"])
        for span in seen.get_finished_spans()
        if span.name.startswith("invoke_agent")
    }


def test_hostile_values_cost_no_run_its_scores(capture: OtlpCapture) -> None:
    with RunningSidecar(sidecar_document(capture.endpoint)) as sidecar:
        runs = send(f"{sidecar.http_url}/v1/traces")
        expected = len(RUNS) * len(SCORERS)
        capture.wait_for(
            lambda: len([s for _, scope, s in capture.spans() if scope == OWN_SCOPE]) >= expected
        )
    evaluations = [span for _, scope, span in capture.spans() if scope == OWN_SCOPE]
    scored: dict[str, list[dict[str, Any]]] = {}
    for span in evaluations:
        scored.setdefault(str(runs.get(span.parent_span_id)), []).append(attrs(span.attributes))
    assert sorted(scored) == sorted(RUNS), sorted(scored)
    for agent, results in scored.items():
        assert len(results) == len(SCORERS), (agent, results)
        assert not [r for r in results if "error.type" in r], (agent, results)
