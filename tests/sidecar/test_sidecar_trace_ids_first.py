"""At low sampling rates a protobuf request is read for its spans' trace ids first and only the
sampled spans are parsed in full: the spans sorted out, held, scored and forwarded are the same
as when the whole request is parsed, on every fixture corpus."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from otel_scorers.demos.example_agent import DEMO_RUNS
from otel_scorers.otlp.decode import parse_json_request
from otel_scorers.otlp.trace_id_schema import TraceIdRequest
from otel_scorers.selection.sampling import TraceIdSampler, threshold_for
from otel_scorers.sidecar.request_scan import Scan, reads_trace_ids_first, scan
from tests.otlp_capture import OtlpCapture, attrs
from tests.sidecar.test_sidecar_errors import PROTOBUF, grpc_export, post, with_one_bad_span
from tests.sidecar_harness import RunningSidecar, agent_spans, encode, sidecar_document

CORPORA = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
FIXTURES = sorted(path for path in CORPORA.glob("*/*.json") if not path.name.endswith(".truth.json"))
SCORERS = [{"type": "no_tool_errors", "sampling": {"rate": 0.1}}]


def body_of(path: Path) -> bytes:
    encoded: bytes = parse_json_request(path.read_bytes()).SerializeToString()
    return encoded


def sorted_out(result: Scan) -> dict[str, Any]:
    """Everything a scan decides, as plain values: which spans are kept (whole, with the resource
    and scope they came under), which are run spans and where, which are rejected and why."""
    return {
        "total": result.total,
        "rejected": result.rejected,
        "problem": result.problem,
        "groups": {
            trace_id: [
                (
                    item.span.SerializeToString(deterministic=True),
                    item.origin.resource.SerializeToString(deterministic=True),
                    item.origin.scope.SerializeToString(deterministic=True),
                    item.origin.schema_url,
                )
                for item in group
            ]
            for trace_id, group in result.groups.items()
        },
        "runs": {
            trace_id: sorted(result.run_positions[id(item)] for item in runs)
            for trace_id, runs in result.runs.items()
        },
    }


def test_only_rates_up_to_an_eighth_read_trace_ids_first() -> None:
    assert reads_trace_ids_first(threshold_for(0.01))
    assert reads_trace_ids_first(threshold_for(0.125))
    assert not reads_trace_ids_first(threshold_for(0.2))
    assert not reads_trace_ids_first(threshold_for(1.0))


@pytest.mark.parametrize("rate", [0.1, 1.0])
def test_every_fixture_request_sorts_out_the_same_read_by_trace_ids_first(rate: float) -> None:
    assert len(FIXTURES) > 100
    threshold = threshold_for(rate)
    kept = 0
    for path in FIXTURES:
        body = body_of(path)
        whole = scan(ExportTraceServiceRequest.FromString(body), len(body), threshold)
        by_ids = scan(TraceIdRequest.FromString(body), len(body), threshold)
        assert sorted_out(by_ids) == sorted_out(whole), path
        kept += sum(len(group) for group in whole.groups.values())
    assert kept > 0  # some spans were sampled and parsed alone at every rate


def test_a_sampled_span_that_does_not_parse_is_rejected_alone_and_an_unsampled_one_is_not_read() -> None:
    body, total = with_one_bad_span(body_of(FIXTURES[0]))
    everything = scan(TraceIdRequest.FromString(body), len(body), threshold_for(1.0))
    assert len(everything.rejected) == 1
    assert "a span does not parse" in (everything.problem or "")
    assert sum(len(group) for group in everything.groups.values()) == total - 1
    nothing = scan(TraceIdRequest.FromString(body), len(body), threshold_for(0.0))
    assert nothing.rejected == [] and nothing.groups == {}


@pytest.fixture
def scores() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


@pytest.fixture
def downstream() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


def test_inline_forwards_and_scores_the_fixture_corpora_as_a_whole_parse_does(
    scores: OtlpCapture, downstream: OtlpCapture
) -> None:
    """Every fixture file sent inline at sampling 0.1 twice, read by trace ids first and parsed
    whole: downstream receives the same spans with the same score attributes."""
    bodies, sent = _apart(FIXTURES)
    keys = {(span.trace_id, span.span_id) for span in sent}  # a few spans are in a file twice
    forward = {"endpoint": downstream.endpoint, "protocol": "grpc", "timeout_s": 5}
    received: list[dict[tuple[bytes, bytes], dict[str, Any]]] = []
    counts: list[int] = []
    for trace_ids_first in (True, False):
        downstream.traces.clear()
        document = sidecar_document(scores.endpoint, SCORERS, mode="inline", forward=forward)
        with RunningSidecar(document) as sidecar:
            assert sidecar.service.intake.trace_ids_first  # as sampling 0.1 makes it
            sidecar.service.intake.trace_ids_first = trace_ids_first
            for body in bodies:
                reply = ExportTraceServiceResponse.FromString(grpc_export(sidecar, body, token=None))
                assert reply.partial_success.rejected_spans == 0
            assert downstream.wait_for(lambda: _keys(downstream) >= keys)
        # Stopped: every held span was released and flushed.
        received.append(
            {(span.trace_id, span.span_id): attrs(span.attributes) for span in downstream.span_list()}
        )
        counts.append(len(downstream.span_list()))
    by_ids, whole = received
    assert by_ids == whole
    assert set(by_ids) == keys
    assert counts[0] == counts[1] <= len(sent)  # none twice
    scored = {key for key, attributes in by_ids.items() if "otel_scorers.score.no_tool_errors" in attributes}
    sampler = TraceIdSampler(0.1)
    assert scored and all(sampler.sampled(int.from_bytes(trace_id, "big")) for trace_id, _ in scored)


def _keys(capture: OtlpCapture) -> set[tuple[bytes, bytes]]:
    return {(span.trace_id, span.span_id) for span in capture.span_list()}


def _apart(paths: list[Path]) -> tuple[list[bytes], list[Any]]:
    """The requests of the fixture files whose traces no earlier file has (two files of one corpus
    share a trace id: whether the second comes in time for its trace depends on timing), and
    their spans."""
    bodies: list[bytes] = []
    spans: list[Any] = []
    seen: set[bytes] = set()
    for path in paths:
        body = body_of(path)
        request = ExportTraceServiceRequest.FromString(body)
        found = [
            span
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]
        trace_ids = {span.trace_id for span in found}
        if trace_ids & seen:
            continue
        seen |= trace_ids
        bodies.append(body)
        spans += found
    return bodies, spans


def one_trace(trace_id: bytes) -> bytes:
    """A run of the example agent as one request, its spans under `trace_id`."""
    request = encode(agent_spans(DEMO_RUNS[:1]))
    for span in request.resource_spans[0].scope_spans[0].spans:
        span.trace_id = trace_id
    encoded: bytes = request.SerializeToString()
    return encoded


@pytest.mark.parametrize("sampled", [True, False])
@pytest.mark.parametrize("transport", ["grpc", "http"])
def test_a_span_that_does_not_parse_is_rejected_alone_and_the_rest_goes_on(
    scores: OtlpCapture, downstream: OtlpCapture, sampled: bool, transport: str
) -> None:
    # The sampling randomness is a trace id's last 7 bytes: all ones is sampled at any rate above
    # 0, one alone at rate 1 only. A sampled span is parsed in full and found not to parse; an
    # unsampled one is not read until downstream (which parses it) refuses the request.
    trace_id = b"\x01" * 9 + (b"\xff" * 7 if sampled else bytes(6) + b"\x01")
    body, total = with_one_bad_span(one_trace(trace_id))
    forward = {"endpoint": downstream.endpoint, "protocol": "grpc", "timeout_s": 5}
    with RunningSidecar(
        sidecar_document(scores.endpoint, SCORERS, mode="inline", forward=forward)
    ) as sidecar:
        assert sidecar.service.intake.trace_ids_first
        if transport == "grpc":
            reply = ExportTraceServiceResponse.FromString(grpc_export(sidecar, body, token=None))
        else:
            status, data = post(sidecar, body, PROTOBUF, token=None)
            assert status == 200
            reply = ExportTraceServiceResponse.FromString(data)
        assert reply.partial_success.rejected_spans == 1
        assert "UTF-8" in reply.partial_success.error_message
        assert downstream.wait_for(lambda: len(downstream.span_list()) >= total - 1)
    forwarded = downstream.span_list()
    assert len(forwarded) == total - 1 and all(span.trace_id == trace_id for span in forwarded)
    scored = [span for span in forwarded if "otel_scorers.score.no_tool_errors" in attrs(span.attributes)]
    assert len(scored) == (1 if sampled else 0)
