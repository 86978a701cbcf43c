"""A protobuf request's spans kept as read with `span_bytes_schema` (key-values as bytes): screened,
sorted out, judged worth joining and written again as when the request is parsed whole with
opentelemetry-proto's classes, on every fixture corpus."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from otel_scorers.otlp.span_bytes_schema import BytesRequest, BytesSpan
from otel_scorers.selection.sampling import threshold_for
from otel_scorers.sidecar.joinable import holds_convention_span
from otel_scorers.sidecar.payload import decode_salvaging
from otel_scorers.sidecar.request_scan import Scan, scan
from otel_scorers.sidecar.span_marks import RUN, span_mark
from tests.sidecar.test_sidecar_trace_ids_first import FIXTURES, body_of


def sorted_out(result: Scan) -> dict[str, Any]:
    """Everything a scan decides, as plain values: each kept span whole (as opentelemetry-proto
    writes it), with its origin, and the positions of the run spans and of the spans whose kind
    key names a run, and each trace's strongest kind."""
    return {
        "total": result.total,
        "rejected": result.rejected,
        "groups": {
            trace_id: [
                (
                    Span.FromString(item.span.SerializeToString()).SerializeToString(deterministic=True),
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
        "named_runs": {
            trace_id: sorted(result.run_positions[id(item)] for item in runs)
            for trace_id, runs in result.named_runs.items()
        },
        "kinds": result.kinds,
    }


def test_a_protobuf_request_to_be_kept_is_read_with_key_values_as_bytes() -> None:
    body = body_of(FIXTURES[0])
    kept, _, _ = decode_salvaging(body, "protobuf")
    assert isinstance(kept, BytesRequest)
    refused, _, _ = decode_salvaging(body, "protobuf", kept=False)  # counted only: read once
    assert isinstance(refused, ExportTraceServiceRequest)


@pytest.mark.parametrize("rate", [0.5, 1.0])
def test_every_fixture_request_sorts_out_the_same_read_with_key_values_as_bytes(rate: float) -> None:
    assert len(FIXTURES) > 100
    threshold = threshold_for(rate)
    runs = named = 0
    for path in FIXTURES:
        body = body_of(path)
        whole = scan(ExportTraceServiceRequest.FromString(body), len(body), threshold)
        as_bytes = scan(BytesRequest.FromString(body), len(body), threshold)
        assert all(type(item.span) is BytesSpan for group in as_bytes.groups.values() for item in group)
        assert sorted_out(as_bytes) == sorted_out(whole), path
        runs += len(whole.runs)
        named += len(whole.named_runs)
    assert runs > 100 and named > 0  # markers and kind keys were read from the bytes


def test_every_fixture_trace_is_judged_worth_joining_the_same_read_with_key_values_as_bytes() -> None:
    judged = 0
    for path in FIXTURES:
        body = body_of(path)
        whole = scan(ExportTraceServiceRequest.FromString(body), len(body), 0)
        as_bytes = scan(BytesRequest.FromString(body), len(body), 0)
        for trace_id, group in whole.groups.items():
            verdict = holds_convention_span(group)
            assert holds_convention_span(as_bytes.groups[trace_id]) == verdict, path
            judged += verdict
    assert judged > 100


def test_every_fixture_request_written_again_from_key_values_as_bytes_is_the_request_received() -> None:
    # An empty status written by the sender (the OpenTelemetry SDK's unset status) is kept.
    for path in FIXTURES:
        body = body_of(path)
        again = BytesRequest.FromString(body).SerializeToString()
        assert ExportTraceServiceRequest.FromString(again) == ExportTraceServiceRequest.FromString(body), path


def test_an_empty_key_value_does_not_hide_a_marker_read_from_bytes() -> None:
    marker = KeyValue(key="gen_ai.operation.name", value=AnyValue(string_value="invoke_agent"))
    span = Span(name="step", attributes=[KeyValue(), marker])
    assert span.attributes[0].SerializeToString() == b""
    as_bytes = BytesSpan.FromString(span.SerializeToString())
    assert span_mark(span) == span_mark(as_bytes) == RUN
