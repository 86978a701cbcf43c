"""What a pipeline holds is on its metrics: the traces its assembler buffers
(`otel_scorers.traces.buffered`) and the conversations it keeps open
(`otel_scorers.conversations.open`), in-process and on the sidecar's `/metrics`."""

from __future__ import annotations

import urllib.request
from dataclasses import replace

from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers import ScoringSpanProcessor
from otel_scorers.conversation_turns import Turn
from otel_scorers.conversations.scoring import bind_conversation
from otel_scorers.conversations.source import ConversationSettings
from otel_scorers.conversations.turn_logs import TurnLogWriter
from otel_scorers.scorers.conversation import turns
from tests.conftest import Telemetry, make_telemetry
from tests.otlp_capture import OtlpCapture
from tests.sidecar_harness import RunningSidecar, encode, metrics_text, sample, send_grpc, sidecar_document
from tests.spans import conversation_turn

TURN = Turn("c-1", 0x5B8EFFF798038103D269B633813FC60C, 0x1234, 1, 2, "trip", "hi", "hello", (), "ok")


def _gauge(telemetry: Telemetry, name: str) -> float:
    (point,) = telemetry.metric_points(name)
    return float(point.value)


def test_in_process_buffered_traces_and_open_conversations_are_gauges(telemetry: Telemetry) -> None:
    settings = ConversationSettings(bindings=(bind_conversation(turns()),), tick_s=3600)
    processor = ScoringSpanProcessor([], conversations=settings, **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    tracer = telemetry.tracer_provider.get_tracer("agent")
    conversation_turn(tracer, "c-1", "first")
    conversation_turn(tracer, "c-2", "first")
    conversation_turn(tracer, "c-1", "second")
    with tracer.start_as_current_span(
        "invoke_agent trip", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        with tracer.start_as_current_span(
            "invoke_agent trip", attributes={"gen_ai.operation.name": "invoke_agent"}
        ):
            pass
        assert processor.force_flush()
        assert _gauge(telemetry, "otel_scorers.traces.buffered") == 1  # the run still open
        assert _gauge(telemetry, "otel_scorers.conversations.open") == 2
    assert processor.force_flush()
    assert _gauge(telemetry, "otel_scorers.traces.buffered") == 0
    processor.shutdown()


def _turn_records(count: int) -> bytes:
    telemetry = make_telemetry()
    writer = TurnLogWriter(telemetry.logger_provider)
    for index in range(count):
        writer.emit(replace(TURN, conversation_id=f"c-{index}", span_id=0x1234 + index))
    body: bytes = encode_logs(telemetry.logs.get_finished_logs()).SerializeToString()
    telemetry.logger_provider.shutdown()
    return body


def test_the_sidecar_serves_buffered_traces_and_open_conversations_on_metrics() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent")
    for index in range(3):
        conversation_turn(tracer, f"t-{index}", "hello")
    with OtlpCapture() as capture:
        # Traces wait for their decision long enough to be seen buffered; the conversations come
        # as turn records (the Collector's routing), kept open until they idle.
        document = sidecar_document(capture.endpoint, decision_wait_s=30, max_wait_s=60)
        document["conversations"] = {"turn_records": True, "scorers": [{"type": "turns"}]}
        with RunningSidecar(document) as sidecar:
            send_grpc(sidecar.grpc_endpoint, encode(exporter.get_finished_spans()).SerializeToString())
            request = urllib.request.Request(
                f"{sidecar.http_url}/v1/logs",
                data=_turn_records(2),
                headers={"Content-Type": "application/x-protobuf"},
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                assert response.status == 200
            text = metrics_text(sidecar.http_url)
    assert sample(text, "otel_scorers_traces_buffered") == 3
    assert sample(text, "otel_scorers_conversations_open") == 2
