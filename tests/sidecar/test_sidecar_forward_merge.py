"""Inline mode merges the requests that arrive while earlier ones are on their way downstream into
one request; each upstream request is still answered for its own spans."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_scorers.demos.example_agent import DEMO_RUNS
from tests.otlp_capture import OtlpCapture
from tests.sidecar_harness import RunningSidecar, agent_spans, encode, send_grpc, sidecar_document

SENDERS = 6


@pytest.fixture
def scores() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


def _inline(scores: OtlpCapture, downstream: OtlpCapture, rate: float = 1.0) -> RunningSidecar:
    forward = {"endpoint": downstream.endpoint, "protocol": "grpc", "timeout_s": 5}
    scorers = [{"type": "no_tool_errors", "sampling": {"rate": rate}}]
    return RunningSidecar(sidecar_document(scores.endpoint, mode="inline", forward=forward, scorers=scorers))


def _bodies() -> list[bytes]:
    return [encode(agent_spans(DEMO_RUNS[:2])).SerializeToString() for _ in range(SENDERS)]


def _send_at_once(sidecar: RunningSidecar, bodies: list[bytes]) -> list[BaseException | None]:
    """Each body from a sender of its own, all at once; what each got (None: acknowledged)."""

    def send(body: bytes) -> BaseException | None:
        try:
            send_grpc(sidecar.grpc_endpoint, body)
        except grpc.RpcError as exc:
            return exc
        return None

    with ThreadPoolExecutor(len(bodies)) as pool:
        return list(pool.map(send, bodies))


def _span_ids(bodies: list[bytes]) -> list[bytes]:
    return sorted(
        span.span_id
        for body in bodies
        for resource_spans in ExportTraceServiceRequest.FromString(body).resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    )


def _with_other_than_run_spans(downstream: OtlpCapture) -> int:
    """Requests downstream that carry spans of the senders' requests (not only held run spans)."""
    return sum(
        1
        for request in downstream.traces
        if any(
            not span.name.startswith("invoke_agent")
            for resource_spans in request.resource_spans
            for scope_spans in resource_spans.scope_spans
            for span in scope_spans.spans
        )
    )


def test_requests_arriving_while_downstream_is_busy_go_on_together_each_span_once(
    scores: OtlpCapture,
) -> None:
    bodies = _bodies()
    with OtlpCapture() as downstream, _inline(scores, downstream) as sidecar:
        downstream.delay_s = 0.5  # every send takes a while: the requests behind it wait
        assert _send_at_once(sidecar, bodies) == [None] * SENDERS
        assert downstream.wait_for(lambda: len(downstream.span_list()) >= len(_span_ids(bodies)))
        merged = _with_other_than_run_spans(downstream)
    assert sorted(span.span_id for span in downstream.span_list()) == _span_ids(bodies)
    assert merged < SENDERS


def test_a_merged_request_too_large_for_downstream_goes_on_part_by_part(scores: OtlpCapture) -> None:
    bodies = _bodies()
    limit = max(len(body) for body in bodies) * 3 // 2  # one request fits, no two do
    # Nothing sampled, nothing held: every span goes on in the requests as they came.
    with OtlpCapture(max_receive_bytes=limit) as downstream, _inline(scores, downstream, 0.0) as sidecar:
        downstream.delay_s = 0.5
        assert _send_at_once(sidecar, bodies) == [None] * SENDERS
        assert downstream.wait_for(lambda: len(downstream.span_list()) >= len(_span_ids(bodies)))
    assert sorted(span.span_id for span in downstream.span_list()) == _span_ids(bodies)
    assert all(request.ByteSize() <= limit for request in downstream.traces)


def test_an_unavailable_downstream_refuses_every_merged_request_without_sending_its_parts(
    scores: OtlpCapture,
) -> None:
    bodies = _bodies()
    with OtlpCapture() as downstream, _inline(scores, downstream) as sidecar:
        downstream.delay_s = 0.5
        downstream.fail_with = grpc.StatusCode.UNAVAILABLE
        answers = _send_at_once(sidecar, bodies)
        attempts = downstream.failed
    assert all(isinstance(answer, grpc.RpcError) for answer in answers)
    assert {answer.code() for answer in answers if isinstance(answer, grpc.RpcError)} == {
        grpc.StatusCode.UNAVAILABLE
    }
    # Retrying a merged request part by part cannot help a downstream that is not there.
    assert attempts < SENDERS
    assert downstream.traces == []
