"""Inline mode: every span goes on downstream; run spans are held until their scores are attached
as attributes (at most hold_timeout_s); a failing downstream makes the upstream retry."""

from __future__ import annotations

import asyncio
import http.client
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from otel_scorers.demos.example_agent import DEMO_RUNS
from otel_scorers.model import AgentRun
from otel_scorers.selection.sampling import TraceIdSampler
from otel_scorers.span_record import OWN_SCOPE
from tests.otlp_capture import HttpTraceCapture, OtlpCapture, attrs
from tests.sidecar.test_sidecar_errors import grpc_export
from tests.sidecar_harness import RunningSidecar, agent_spans, encode, is_run, sidecar_document
from tests.waiting import wait_until


async def very_slow_check(run: AgentRun) -> float:
    await asyncio.sleep(1.0)
    return 1.0


@pytest.fixture
def scores() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


@pytest.fixture
def downstream() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


def inline(scores: OtlpCapture, downstream: OtlpCapture, **settings: Any) -> RunningSidecar:
    forward = {"endpoint": downstream.endpoint, "protocol": "grpc", "timeout_s": 2}
    return RunningSidecar(sidecar_document(scores.endpoint, mode="inline", forward=forward, **settings))


def test_every_span_goes_downstream_once_and_run_spans_carry_their_scores(
    scores: OtlpCapture, downstream: OtlpCapture
) -> None:
    spans = agent_spans(DEMO_RUNS)
    with inline(scores, downstream) as sidecar:
        half = len(spans) // 2
        grpc_export(sidecar, encode(spans[:half]).SerializeToString(), token=None)
        grpc_export(sidecar, encode(spans[half:]).SerializeToString(), token=None)
        assert downstream.wait_for(lambda: len(downstream.span_list()) >= len(spans))
    forwarded = downstream.span_list()
    assert sorted(span.span_id for span in forwarded) == sorted(
        span.context.span_id.to_bytes(8, "big") for span in spans
    )
    runs = [attrs(span.attributes) for span in forwarded if span.name.startswith("invoke_agent")]
    assert len(runs) == len(DEMO_RUNS)
    for run in runs:
        assert run["otel_scorers.score.no_tool_errors"] in (0.0, 1.0)
        assert run["otel_scorers.label.called_tool"] in ("pass", "fail")
    by_question = {run.get("gen_ai.input.messages"): run for run in runs}
    paris = next(run for question, run in by_question.items() if question and "Paris" in question)
    assert paris["otel_scorers.label.says-sunny"] == "pass"
    # The resource and scope of each held span are those it was sent with.
    resources = {attrs(resource.attributes)["service.name"] for resource in _resources(downstream)}
    assert resources == {"weather-service"}
    # The scores also went out as evaluation spans, as in tap mode; never downstream.
    assert scores.wait_for(lambda: sum(1 for _, scope, _ in scores.spans() if scope == OWN_SCOPE) >= 18)
    assert all(scope != OWN_SCOPE for _, scope, _ in downstream.spans())


def _resources(capture: OtlpCapture) -> list[Any]:
    return [
        resource_spans.resource for request in capture.traces for resource_spans in request.resource_spans
    ]


def test_a_run_span_goes_on_with_their_scores_after_hold_timeout(
    scores: OtlpCapture, downstream: OtlpCapture
) -> None:
    spans = agent_spans(DEMO_RUNS[:1])
    slow = [{"type": "tests.sidecar.test_sidecar_inline:very_slow_check"}]
    with inline(scores, downstream, scorers=slow, hold_timeout_s=0.2, decision_wait_s=0.05) as sidecar:
        grpc_export(sidecar, encode(spans).SerializeToString(), token=None)
        assert downstream.wait_for(lambda: len(downstream.span_list()) >= len(spans), timeout_s=30)
        # It went on without the scores: it did not wait for the check.
        (run,) = [span for span in downstream.span_list() if span.name.startswith("invoke_agent")]
        assert not any(key.startswith("otel_scorers.") for key in attrs(run.attributes))
        assert scores.wait_for(lambda: any(scope == OWN_SCOPE for _, scope, _ in scores.spans()))
    assert len(downstream.span_list()) == len(spans)  # the late scores did not send it twice


def test_a_failing_downstream_makes_the_sender_retry_and_nothing_is_lost(
    scores: OtlpCapture, downstream: OtlpCapture
) -> None:
    spans = agent_spans(DEMO_RUNS[:2])
    body = encode(spans).SerializeToString()
    downstream.fail_with = grpc.StatusCode.UNAVAILABLE
    with inline(scores, downstream) as sidecar:
        with pytest.raises(grpc.RpcError) as raised:
            grpc_export(sidecar, body, token=None)
        assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "downstream" in raised.value.details()
        connection = http.client.HTTPConnection("127.0.0.1", sidecar.service.http.port, timeout=10)
        connection.request(
            "POST", "/v1/traces", body=body, headers={"Content-Type": "application/x-protobuf"}
        )
        response = connection.getresponse()
        response.read()
        assert response.status == 503
        assert response.getheader("Retry-After") is not None
        connection.close()
        downstream.fail_with = None
        grpc_export(sidecar, body, token=None)  # the retry
        assert downstream.wait_for(lambda: len(downstream.span_list()) >= len(spans))
    forwarded = downstream.span_list()
    assert len(forwarded) == len(spans)
    run_spans = [span for span in forwarded if span.name.startswith("invoke_agent")]
    assert len(run_spans) == 2
    assert all("otel_scorers.score.no_tool_errors" in attrs(span.attributes) for span in run_spans)
    assert sum(1 for span in spans if is_run(span)) == 2


def test_inline_forwarding_over_otlp_http_with_headers(scores: OtlpCapture) -> None:
    spans = agent_spans(DEMO_RUNS[:2])
    with HttpTraceCapture() as downstream:
        forward = {
            "endpoint": downstream.endpoint,
            "protocol": "http/protobuf",
            "headers": {"x-tenant": "t1"},
        }
        document = sidecar_document(scores.endpoint, mode="inline", forward=forward)
        with RunningSidecar(document) as sidecar:
            grpc_export(sidecar, encode(spans).SerializeToString(), token=None)
            wait_until(lambda: len(downstream.span_list()) >= len(spans), 60, f"{len(spans)} spans forwarded")
        forwarded = downstream.span_list()
        assert len(forwarded) == len(spans)
        assert all(headers.get("x-tenant") == "t1" for headers in downstream.headers)
        run_spans = [span for span in forwarded if span.name.startswith("invoke_agent")]
        assert all("otel_scorers.label.no_tool_errors" in attrs(span.attributes) for span in run_spans)


@pytest.mark.parametrize(("rate", "repeat"), [(1.0, 1), (0.1, 30)])
def test_held_and_invalid_spans_are_taken_out_of_what_goes_on_and_nothing_else(
    scores: OtlpCapture, downstream: OtlpCapture, rate: float, repeat: int
) -> None:
    # At rate 0.1 the few sampled spans are copied out of the request, which is then forwarded
    # as it came, less its held run spans; at rate 1 a copy of it is.
    spans = agent_spans(list(DEMO_RUNS) * repeat)
    request = encode(spans)
    bad = request.resource_spans[0].scope_spans[0].spans.add()
    bad.CopyFrom(request.resource_spans[0].scope_spans[0].spans[0])
    bad.trace_id = bytes(16)
    scorers = [{"type": "no_tool_errors", "sampling": {"rate": rate}}]
    with inline(scores, downstream, scorers=scorers) as sidecar:
        response = ExportTraceServiceResponse.FromString(
            grpc_export(sidecar, request.SerializeToString(), token=None)
        )
        assert response.partial_success.rejected_spans == 1
        assert downstream.wait_for(lambda: len(downstream.span_list()) >= len(spans))
    # The sidecar has stopped, its held spans released and flushed: anything forwarded twice is here.
    forwarded = downstream.span_list()
    assert sorted(span.span_id for span in forwarded) == sorted(
        span.context.span_id.to_bytes(8, "big") for span in spans
    )
    assert all(span.trace_id != bytes(16) for span in forwarded)
    scored = [span for span in forwarded if "otel_scorers.score.no_tool_errors" in attrs(span.attributes)]
    assert 0 < len(scored) <= len(DEMO_RUNS) * repeat


@pytest.mark.parametrize(("rate", "repeat"), [(1.0, 1), (0.1, 30)])
def test_a_request_whose_bytes_cannot_be_cut_is_forwarded_encoded_again_and_whole(
    scores: OtlpCapture, downstream: OtlpCapture, rate: float, repeat: int
) -> None:
    # Protobuf takes an unknown group field; cutting the held run spans out of the bytes does not
    # step over one, so the parsed request is encoded again: nothing is lost or sent twice. At
    # rate 0.1 the request was read for its trace ids first: what it stepped over goes on too.
    spans = agent_spans(list(DEMO_RUNS) * repeat)
    group = bytes([0x9B, 0x06, 0x08, 0x01, 0x9C, 0x06])  # field 99: start group, a varint, end group
    scorers = [{"type": "no_tool_errors", "sampling": {"rate": rate}}]
    with inline(scores, downstream, scorers=scorers) as sidecar:
        grpc_export(sidecar, group + encode(spans).SerializeToString(), token=None)
        assert downstream.wait_for(lambda: len(downstream.span_list()) >= len(spans))
    forwarded = downstream.span_list()
    assert sorted(span.SerializeToString(deterministic=True) for span in forwarded) == sorted(
        span.SerializeToString(deterministic=True)
        for span in _with_their_scores(encode(spans).resource_spans[0].scope_spans[0].spans, forwarded)
    )
    runs = [attrs(span.attributes) for span in forwarded if span.name.startswith("invoke_agent")]
    assert len(runs) == len(DEMO_RUNS) * repeat
    sampler = TraceIdSampler(rate)
    sampled = [
        span
        for span in forwarded
        if span.name.startswith("invoke_agent") and sampler.sampled(int.from_bytes(span.trace_id, "big"))
    ]
    assert sampled and all("otel_scorers.label.no_tool_errors" in attrs(span.attributes) for span in sampled)


def _with_their_scores(sent: Any, forwarded: Any) -> list[Any]:
    """The spans sent, each with the score attributes its forwarded copy carries added."""
    added = {
        span.span_id: [kv for kv in span.attributes if kv.key.startswith("otel_scorers.")]
        for span in forwarded
    }
    out = []
    for span in sent:
        copy = type(span)()
        copy.CopyFrom(span)
        copy.attributes.extend(added.get(span.span_id, []))
        out.append(copy)
    return out
