"""End to end over real sockets: the OTel SDK's OTLP exporters send an instrumented agent's traces
to the sidecar, which sends evaluation spans, events and metrics to a capturing OTLP receiver."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers.demos.example_agent import DEMO_RUNS, ExampleAgent
from otel_scorers.span_record import OWN_SCOPE
from tests.otlp_capture import OtlpCapture, attrs
from tests.sidecar_harness import RunningSidecar, sidecar_document


@pytest.fixture
def capture() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


def run_agent(exporter: SpanExporter) -> list[ReadableSpan]:
    """Run the demo scripts with `exporter` behind a batch processor; return the run spans."""
    seen = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-service"}))
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=50))
    provider.add_span_processor(SimpleSpanProcessor(seen))
    agent = ExampleAgent(tracer=provider.get_tracer("example-agent"))
    for script in DEMO_RUNS:
        agent.run(script)
    provider.shutdown()
    return [span for span in seen.get_finished_spans() if span.name.startswith("invoke_agent")]


@pytest.mark.parametrize("protocol", ["grpc", "grpc+gzip", "http/protobuf", "http/protobuf+gzip"])
def test_sdk_exporter_traces_are_scored_and_scores_come_back_over_otlp(
    capture: OtlpCapture, protocol: str
) -> None:
    with RunningSidecar(sidecar_document(capture.endpoint)) as sidecar:
        if protocol.startswith("grpc"):
            exporter: SpanExporter = GrpcSpanExporter(
                endpoint=sidecar.grpc_endpoint,
                insecure=True,
                compression=grpc.Compression.Gzip
                if protocol.endswith("gzip")
                else grpc.Compression.NoCompression,
            )
        else:
            compression = Compression.Gzip if protocol.endswith("gzip") else Compression.NoCompression
            exporter = HttpSpanExporter(endpoint=f"{sidecar.http_url}/v1/traces", compression=compression)
        run_spans = run_agent(exporter)
        # 6 runs x 3 scorers: every evaluation span, event and metric comes back.
        assert capture.wait_for(
            lambda: (
                len([s for _, scope, s in capture.spans() if scope == OWN_SCOPE]) >= 18
                and len(list(capture.log_records())) >= 18
            )
        )
    evaluations = [span for _, scope, span in capture.spans() if scope == OWN_SCOPE]
    assert len(evaluations) == 18
    assert {span.name for span in evaluations} == {
        "evaluate no_tool_errors",
        "evaluate called_tool",
        "evaluate says-sunny",
    }
    # Each evaluation span is a child of the run span it scored, in the agent's own trace.
    run_ids = [(span.context.trace_id, span.context.span_id) for span in run_spans]
    results: dict[tuple[int, int], dict[str, dict[str, Any]]] = {}
    for span in evaluations:
        key = (int.from_bytes(span.trace_id, "big"), int.from_bytes(span.parent_span_id, "big"))
        values = attrs(span.attributes)
        results.setdefault(key, {})[values["gen_ai.evaluation.name"]] = values
    assert sorted(results) == sorted(run_ids)
    paris, oslo, atlantis, _, joke, no_content = (results[key] for key in run_ids)
    assert paris["says-sunny"]["gen_ai.evaluation.score.label"] == "pass"
    assert paris["says-sunny"]["gen_ai.agent.name"] == "weather-agent"
    assert oslo["says-sunny"]["gen_ai.evaluation.score.label"] == "fail"
    assert atlantis["no_tool_errors"]["gen_ai.evaluation.score.label"] == "fail"
    assert joke["called_tool"]["gen_ai.evaluation.score.label"] == "fail"
    assert "otel_scorers.skipped" in no_content["says-sunny"]

    events = list(capture.log_records())
    assert len(events) == 18
    assert {event.event_name for event in events} == {"gen_ai.evaluation.result"}
    assert {(event.trace_id, event.span_id) for event in events} == {
        (span.trace_id, span.parent_span_id) for span in evaluations
    }
    # 18 results, of which one skipped (a text check on a run whose content was not captured).
    assert capture.wait_for(lambda: capture.latest_total("gen_ai.evaluation.results") == 17)
    # The three are pass/fail checks: counted, with no score histogram.
    assert "gen_ai.evaluation.score" not in capture.metric_names()
    assert "otel_scorers.receiver.spans" in capture.metric_names()
