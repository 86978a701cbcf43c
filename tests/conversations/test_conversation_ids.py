"""A conversation id of 100 kB sent to a sidecar as turn records, over HTTP and gRPC: kept and
emitted in its bounded form, one conversation per distinct id."""

from __future__ import annotations

import urllib.request

import grpc
import pytest
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

from otel_scorers.conversation_turns import MAX_CONVERSATION_ID, Turn, bounded_conversation_id
from otel_scorers.conversations.turn_logs import TurnLogWriter

from ..otlp_capture import OtlpCapture, attrs
from ..sidecar_harness import RunningSidecar, sidecar_document

LONG_IDS = ["w" * 100_000 + "-a", "w" * 100_000 + "-b"]


def _records() -> bytes:
    logs = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    writer = TurnLogWriter(provider)
    for n, long_id in enumerate(LONG_IDS):
        for turn in (1, 2):
            span_id = 10 * n + turn
            writer.emit(
                Turn(long_id, 0xAB, span_id, start_ns=span_id, end_ns=span_id + 1, input="q", output="a")
            )
    body: bytes = encode_logs(logs.get_finished_logs()).SerializeToString()
    return body


@pytest.mark.parametrize("transport", ["http", "grpc"])
def test_turn_records_with_long_conversation_ids_are_kept_and_emitted_bounded(transport: str) -> None:
    body = _records()
    with OtlpCapture() as capture:
        document = sidecar_document(capture.endpoint, scoring_process=False)
        document.pop("scorers")
        document["conversations"] = {
            "idle_timeout_s": 0.5,
            "tick_s": 0.1,
            "turn_records": True,
            "scorers": [{"type": "turns"}],
        }
        with RunningSidecar(document) as sidecar:
            if transport == "http":
                posted = urllib.request.Request(
                    f"{sidecar.http_url}/v1/logs",
                    data=body,
                    headers={"Content-Type": "application/x-protobuf"},
                )
                with urllib.request.urlopen(posted, timeout=10) as reply:
                    assert reply.status == 200
            else:
                with grpc.insecure_channel(sidecar.grpc_endpoint) as channel:
                    export = channel.unary_unary("/opentelemetry.proto.collector.logs.v1.LogsService/Export")
                    export(body, timeout=10)
            assert capture.wait_for(
                lambda: len([s for s in capture.span_list() if s.name == "evaluate turns"]) == 2
            )
        spans = [attrs(s.attributes) for s in capture.span_list() if s.name == "evaluate turns"]
    emitted = sorted(str(values["gen_ai.conversation.id"]) for values in spans)
    assert emitted == sorted(bounded_conversation_id(long_id)[0] for long_id in LONG_IDS)
    assert all(len(each) == MAX_CONVERSATION_ID for each in emitted)
    assert all(values["gen_ai.evaluation.score.value"] == 2 for values in spans)  # both turns each
