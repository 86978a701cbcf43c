"""Evaluation spans and events written as OTLP (`OtlpScoreExport`) are the messages the SDK's own
encoders make of the SDK spans and log records the SDK output builds through providers.

The reference is the SDK: the same scores go through `SdkOutput` with SDK providers (in-memory
exporters, then the SDK's `encode_spans` / `encode_logs`) and through `OtlpOutput` with an
`OtlpScoreExport` to a real OTLP receiver on loopback; the decoded messages must be equal, apart
from what is random or read from the clock (span ids, a log's observed time).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
import pytest
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers import ScoringSpanProcessor, checks
from otel_scorers.emission.otlp_output import OtlpOutput
from otel_scorers.emission.sdk_output import SdkOutput
from otel_scorers.model import AgentRun, JudgeUsage, Score, ScoreError
from otel_scorers.otlp.score_export import OtlpScoreExport
from tests.otlp_capture import OtlpCapture

RESOURCE = Resource.create({"service.name": "weather-agent", "deployment.environment": "test", "pid": 42})
RUN = AgentRun(
    trace_id=0x5B8EFFF798038103D269B633813FC60C,
    span_id=0x051581BF3CB55C13,
    agent_name="weather",
    input="What's the weather in Paris?",
    output="It is sunny, 21°C.",
)
RUNS = [RUN, replace(RUN, trace_id=0x0AF7651916CD43DD8448EB211C80319C, span_id=0xB7AD6B7169203331)]
SCORES = [
    Score(
        "no_tool_errors",
        value=1.0,
        label="pass",
        reason="every tool call succeeded",
        duration_s=0.000_004,
        start_ns=1_700_000_000_000_000_000,
    ),
    Score("similarity", value=0.42, reason="é" * 3000, duration_s=0.25, start_ns=1_700_000_000_100_000_000),
    Score(
        "temperature",
        error=ScoreError("timeout", "scorer did not finish within 30s"),
        duration_s=30.0,
        start_ns=1_700_000_001_000_000_000,
    ),
    Score(
        "says-sunny", skipped="the trace did not carry the run's output", start_ns=1_700_000_002_000_000_000
    ),
    Score(
        "answer_relevancy",
        value=0.75,
        label="pass",
        reason="3 of 4 statements relevant",
        usage=JudgeUsage(
            model="openai/gpt-4o-mini", calls=1, input_tokens=512, output_tokens=-1, cost_usd=0.0003
        ),
        duration_s=1.5,
        start_ns=1_700_000_003_000_000_000,
    ),
]


def through_sdk(
    runs: list[AgentRun], scores: list[Score]
) -> tuple[ExportTraceServiceRequest, ExportLogsServiceRequest]:
    spans, logs = InMemorySpanExporter(), InMemoryLogRecordExporter()
    tracer_provider = TracerProvider(resource=RESOURCE)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider(resource=RESOURCE)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    output = SdkOutput(tracer_provider, logger_provider)
    for run in runs:
        output.emit(run, scores)
    return encode_spans(spans.get_finished_spans()), encode_logs(logs.get_finished_logs())


def written(export: OtlpScoreExport, runs: list[AgentRun], scores: list[Score]) -> None:
    output = OtlpOutput(export)
    for run in runs:  # the second run's spans and events are made of the first's written parts
        output.emit(run, scores)
    assert export.force_flush(10_000)
    export.shutdown()


def comparable(traces: ExportTraceServiceRequest, logs: ExportLogsServiceRequest) -> tuple[Any, Any]:
    """The requests with span ids and observed times cleared, spans and records in name order."""
    traces, logs = (
        ExportTraceServiceRequest.FromString(traces.SerializeToString()),
        ExportLogsServiceRequest.FromString(logs.SerializeToString()),
    )
    for resource_spans in traces.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            spans = sorted(scope_spans.spans, key=lambda span: (span.trace_id, span.name))
            for span in spans:
                assert len(span.span_id) == 8 and span.span_id != bytes(8)
                span.span_id = b""
            del scope_spans.spans[:]
            scope_spans.spans.extend(spans)
    for resource_logs in logs.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            records = sorted(
                scope_logs.log_records, key=lambda record: (record.trace_id, str(record.attributes))
            )
            for record in records:
                assert record.observed_time_unix_nano > 0
                record.observed_time_unix_nano = 0
            del scope_logs.log_records[:]
            scope_logs.log_records.extend(records)
    return traces, logs


def merged(requests: list[Any], kind: type) -> Any:
    request = kind()
    for part in requests:
        request.MergeFrom(part)
    return request


def test_written_spans_and_events_over_grpc_equal_the_sdk_encoding_of_sdk_spans_and_log_records() -> None:
    with OtlpCapture() as capture:
        written(OtlpScoreExport(capture.endpoint, resource=RESOURCE), RUNS, SCORES)
        got = comparable(
            merged(capture.traces, ExportTraceServiceRequest), merged(capture.logs, ExportLogsServiceRequest)
        )
    expected = comparable(*through_sdk(RUNS, SCORES))
    assert got[0] == expected[0]
    assert got[1] == expected[1]
    (span,) = [
        s
        for s in got[0].resource_spans[0].scope_spans[0].spans
        if s.name == "evaluate temperature" and s.trace_id == RUN.trace_id.to_bytes(16, "big")
    ]
    assert span.parent_span_id == RUN.span_id.to_bytes(8, "big")
    assert span.status.code == 2 and span.status.message == "timeout: scorer did not finish within 30s"


def test_runs_of_verdicts_seen_before_are_written_as_the_sdk_encodes_them() -> None:
    """Runs of the same verdicts, written from remembered parts run after run: the same messages
    as the SDK's, each span with an id of its own."""
    runs = [replace(RUN, trace_id=RUN.trace_id + number, span_id=RUN.span_id + number) for number in range(5)]
    scores = SCORES
    with OtlpCapture() as capture:
        written(OtlpScoreExport(capture.endpoint, resource=RESOURCE), runs, scores)
        got = comparable(
            merged(capture.traces, ExportTraceServiceRequest), merged(capture.logs, ExportLogsServiceRequest)
        )
    expected = comparable(*through_sdk(runs, scores))
    assert got[0] == expected[0]
    assert got[1] == expected[1]
    request = merged(capture.traces, ExportTraceServiceRequest)
    ids = [span.span_id for span in request.resource_spans[0].scope_spans[0].spans]
    assert len(ids) == len(runs) * len(scores) == len(set(ids))


def test_written_scores_reach_a_collector_unavailable_at_first_as_the_sdk_encodes_them() -> None:
    """The SDK's gRPC exporter makes its channel again after UNAVAILABLE, then retries."""
    with OtlpCapture() as capture:
        capture.fail_with, capture.fail_times = grpc.StatusCode.UNAVAILABLE, 1  # the first request fails
        written(OtlpScoreExport(capture.endpoint, resource=RESOURCE), RUNS, SCORES)
        got = comparable(
            merged(capture.traces, ExportTraceServiceRequest), merged(capture.logs, ExportLogsServiceRequest)
        )
    assert capture.failed >= 1, "the capture never answered UNAVAILABLE: no reconnection was exercised"
    expected = comparable(*through_sdk(RUNS, SCORES))
    assert got[0] == expected[0]
    assert got[1] == expected[1]


class _HttpCapture:
    """OTLP/HTTP receiver for traces and logs (protobuf bodies)."""

    def __init__(self) -> None:
        self.traces: list[ExportTraceServiceRequest] = []
        self.logs: list[ExportLogsServiceRequest] = []
        capture = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path == "/v1/traces":
                    capture.traces.append(ExportTraceServiceRequest.FromString(body))
                    reply = ExportTraceServiceResponse().SerializeToString()
                else:
                    capture.logs.append(ExportLogsServiceRequest.FromString(body))
                    reply = ExportLogsServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def http_capture() -> Iterator[_HttpCapture]:
    capture = _HttpCapture()
    yield capture
    capture.server.shutdown()


def test_written_spans_and_events_over_http_equal_the_sdk_encoding(http_capture: _HttpCapture) -> None:
    export = OtlpScoreExport(http_capture.endpoint, protocol="http/protobuf", resource=RESOURCE)
    written(export, RUNS, SCORES)
    got = comparable(
        merged(http_capture.traces, ExportTraceServiceRequest),
        merged(http_capture.logs, ExportLogsServiceRequest),
    )
    assert got == comparable(*through_sdk(RUNS, SCORES))


def test_processor_with_export_sends_one_evaluation_span_and_event_per_scorer_under_the_run_span() -> None:
    with OtlpCapture() as capture:
        provider = TracerProvider(resource=RESOURCE)
        processor = ScoringSpanProcessor(
            [checks.no_tool_errors(), checks.includes("sunny")],
            tracer_provider=provider,
            meter_provider=MeterProvider(),
            export=OtlpScoreExport(capture.endpoint),
        )
        provider.add_span_processor(processor)
        tracer = provider.get_tracer("agent")
        for _ in range(3):
            with tracer.start_as_current_span(
                "invoke_agent weather",
                attributes={
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "weather",
                    "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}]',
                },
            ):
                pass
        assert processor.force_flush(10_000)
        processor.shutdown()
        spans = capture.spans()
        records = list(capture.log_records())
    assert len(spans) == 6 and len(records) == 6
    assert {resource["service.name"] for resource, _, _ in spans} == {
        "weather-agent"
    }  # the provider's resource
    assert (
        sorted(span.name for _, _, span in spans)
        == ["evaluate includes"] * 3 + ["evaluate no_tool_errors"] * 3
    )
    run_span_ids = {record.span_id for record in records}
    assert {span.parent_span_id for _, _, span in spans} == run_span_ids and len(run_span_ids) == 3


def test_an_attribute_value_the_wire_format_cannot_carry_is_named_in_the_error() -> None:
    from otel_scorers.otlp.encode import encode_any_value

    with pytest.raises(TypeError, match="object"):
        encode_any_value(object())
