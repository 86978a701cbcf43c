"""Bounded memory and pushback: at the limit the receivers refuse with a retryable answer
(gRPC RESOURCE_EXHAUSTED with RetryInfo, HTTP 429 with Retry-After), and a client that retries
as told loses nothing."""

from __future__ import annotations

import asyncio
import http.client
import time
from collections.abc import Iterator

import grpc
import pytest
from google.rpc.error_details_pb2 import RetryInfo  # type: ignore[import-untyped]
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from otel_scorers.demos.example_agent import DEMO_RUNS
from otel_scorers.model import AgentRun
from otel_scorers.sidecar.grpc import SERVICE
from otel_scorers.span_record import OWN_SCOPE
from tests.otlp_capture import OtlpCapture
from tests.sidecar_harness import RunningSidecar, agent_spans, encode, send_grpc, sidecar_document

SLOW = [{"type": "tests.sidecar.test_sidecar_limits:slow_check"}]


async def slow_check(run: AgentRun) -> float:
    await asyncio.sleep(0.05)
    return 1.0


@pytest.fixture
def capture() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


def tight(capture: OtlpCapture) -> RunningSidecar:
    return RunningSidecar(
        sidecar_document(
            capture.endpoint,
            scorers=SLOW,
            decision_wait_s=0.05,
            max_traces=3,
            max_runs_in_flight=1,
            retry_after_s=0.05,
        )
    )


def evaluations(capture: OtlpCapture) -> int:
    return sum(1 for _, scope, _ in capture.spans() if scope == OWN_SCOPE)


def test_grpc_pushback_carries_retry_info_and_a_retrying_client_loses_nothing(capture: OtlpCapture) -> None:
    bodies = [encode(agent_spans([DEMO_RUNS[0]])).SerializeToString() for _ in range(20)]
    refusals = 0
    with tight(capture) as sidecar, grpc.insecure_channel(sidecar.grpc_endpoint) as channel:
        export = channel.unary_unary(f"/{SERVICE}/Export")
        for body in bodies:
            while True:
                try:
                    export(body, timeout=10)
                    break
                except grpc.RpcError as error:
                    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                    assert "too busy" in error.details()
                    trailers = dict(error.trailing_metadata())
                    delay = RetryInfo.FromString(trailers["google.rpc.retryinfo-bin"]).retry_delay
                    assert "grpc-status-details-bin" in trailers
                    refusals += 1
                    time.sleep(delay.seconds + delay.nanos / 1e9)
        assert capture.wait_for(lambda: evaluations(capture) >= 20)
        assert sidecar.call(lambda: sidecar.service.assembler.buffered_traces) <= 4
    assert refusals > 0  # the limit was reached, and still every run was scored
    assert evaluations(capture) == 20


def test_http_pushback_is_429_with_retry_after_and_readyz_says_why(capture: OtlpCapture) -> None:
    bodies = [encode(agent_spans([DEMO_RUNS[0]])).SerializeToString() for _ in range(12)]
    statuses: list[int] = []
    readiness: list[tuple[int, str]] = []
    with tight(capture) as sidecar:
        connection = http.client.HTTPConnection("127.0.0.1", sidecar.service.http.port, timeout=10)
        for body in bodies:
            while True:
                connection.request(
                    "POST", "/v1/traces", body=body, headers={"Content-Type": "application/x-protobuf"}
                )
                response = connection.getresponse()
                response.read()
                statuses.append(response.status)
                if response.status == 200:
                    break
                assert response.status == 429
                assert response.getheader("Retry-After") == "1"
                connection.request("GET", "/readyz")
                ready = connection.getresponse()
                readiness.append((ready.status, ready.read().decode()))
                time.sleep(0.1)  # sooner than asked: refused again until there is room
        connection.close()
        assert capture.wait_for(lambda: evaluations(capture) >= 12)
    assert 429 in statuses
    # Right after a refusal the buffer is usually still full, and /readyz names the limit; it may
    # have caught up in between, and then says ready.
    limit_reached = (503, "not ready: 3 traces buffered (limit 3)\n")
    assert limit_reached in readiness
    assert set(readiness) <= {limit_reached, (200, "ready\n")}
    assert evaluations(capture) == 12


def test_the_sdk_exporter_retries_a_refusal_and_nothing_is_lost(capture: OtlpCapture) -> None:
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    batches = [agent_spans([DEMO_RUNS[0]]) for _ in range(10)]
    with tight(capture) as sidecar:
        exporter = OTLPSpanExporter(endpoint=sidecar.grpc_endpoint, insecure=True, timeout=20)
        results = [exporter.export(spans) for spans in batches]
        exporter.shutdown()
        assert capture.wait_for(lambda: evaluations(capture) >= 10)
    assert results == [SpanExportResult.SUCCESS] * 10
    assert evaluations(capture) == 10


def many_traces(count: int) -> bytes:
    """One request holding `count` whole example-agent traces."""
    body: bytes = encode(agent_spans([DEMO_RUNS[0]] * count)).SerializeToString()
    return body


def spans_per_trace() -> int:
    return len(agent_spans([DEMO_RUNS[0]]))


def test_one_request_cannot_put_more_traces_in_than_max_traces(capture: OtlpCapture) -> None:
    document = sidecar_document(capture.endpoint, decision_wait_s=30, max_wait_s=60, max_traces=20)
    with RunningSidecar(document) as sidecar:
        reply = ExportTraceServiceResponse.FromString(send_grpc(sidecar.grpc_endpoint, many_traces(60)))
        buffered = sidecar.call(lambda: sidecar.service.assembler.buffered_traces)
    assert buffered == 20
    assert reply.partial_success.rejected_spans == 40 * spans_per_trace()
    assert "did not fit the buffer limits" in reply.partial_success.error_message


def test_one_request_cannot_put_more_spans_in_than_max_spans_over_http(capture: OtlpCapture) -> None:
    per_trace = spans_per_trace()
    document = sidecar_document(
        capture.endpoint, decision_wait_s=30, max_wait_s=60, max_spans=10 * per_trace + 1
    )
    with RunningSidecar(document) as sidecar:
        connection = http.client.HTTPConnection("127.0.0.1", sidecar.service.http.port, timeout=10)
        connection.request(
            "POST", "/v1/traces", body=many_traces(30), headers={"Content-Type": "application/x-protobuf"}
        )
        response = connection.getresponse()
        reply = ExportTraceServiceResponse.FromString(response.read())
        connection.close()
        spans = sidecar.call(lambda: sidecar.service.assembler.buffered_spans)
    assert response.status == 200
    assert spans == 10 * per_trace  # whole traces only: the eleventh would pass the limit
    assert reply.partial_success.rejected_spans == 20 * per_trace


def test_a_request_that_fits_is_taken_whole(capture: OtlpCapture) -> None:
    document = sidecar_document(capture.endpoint, decision_wait_s=30, max_wait_s=60, max_traces=20)
    with RunningSidecar(document) as sidecar:
        reply = ExportTraceServiceResponse.FromString(send_grpc(sidecar.grpc_endpoint, many_traces(20)))
        buffered = sidecar.call(lambda: sidecar.service.assembler.buffered_traces)
    assert buffered == 20
    assert not reply.HasField("partial_success")
