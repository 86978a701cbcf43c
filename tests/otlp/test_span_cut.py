"""Spans cut out of an encoded OTLP trace request: the same request protobuf makes by deleting them
from the parsed message, everything else as it came."""

from __future__ import annotations

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_scorers.demos.example_agent import DEMO_RUNS
from otel_scorers.otlp.span_cut import CutError, Position, without_spans
from tests.sidecar_harness import agent_spans, encode


def _request_of_three_resources() -> ExportTraceServiceRequest:
    """Three resources, the second with two scopes, each with a few hundred spans: span lengths
    over 127 bytes (two-byte lengths), resource_spans over 16 kB (three-byte lengths)."""
    spans = agent_spans(list(DEMO_RUNS) * 20)
    request = ExportTraceServiceRequest()
    for first, count in ((0, 40), (40, 150), (190, 1)):
        resource_spans = request.resource_spans.add()
        resource_spans.CopyFrom(encode(spans[first : first + count]).resource_spans[0])
    second = request.resource_spans[1]
    second.scope_spans.add().CopyFrom(second.scope_spans[0])
    second.scope_spans[1].scope.name = "another-scope"
    return request


def _deleted(request: ExportTraceServiceRequest, positions: set[Position]) -> ExportTraceServiceRequest:
    expected = ExportTraceServiceRequest()
    expected.CopyFrom(request)
    for r_index, s_index, p_index in sorted(positions, reverse=True):
        del expected.resource_spans[r_index].scope_spans[s_index].spans[p_index]
    return expected


@pytest.mark.parametrize(
    "positions",
    [
        {(0, 0, 0)},
        {(0, 0, 39)},
        {(1, 1, 149), (1, 0, 0), (1, 0, 77)},
        {(2, 0, 0)},
        {(0, 0, 5), (1, 0, 6), (1, 1, 7), (2, 0, 0)},
        {(1, 0, index) for index in range(150)},
    ],
)
def test_cutting_spans_from_the_bytes_gives_the_encoding_of_the_request_without_them(
    positions: set[Position],
) -> None:
    request = _request_of_three_resources()
    body = request.SerializeToString()
    cut = without_spans(body, positions)
    # Written by protobuf's serialiser in field order, the cut bytes are exactly its encoding.
    assert cut == _deleted(request, positions).SerializeToString()


def test_nothing_to_cut_leaves_the_body_itself() -> None:
    body = _request_of_three_resources().SerializeToString()
    assert without_spans(body, set()) is body


def test_fields_the_schema_does_not_know_go_on_as_they_came() -> None:
    request = encode(agent_spans(DEMO_RUNS[:1]))
    resource_spans = request.resource_spans[0]
    scope_spans = resource_spans.scope_spans[0]
    spans = [span.SerializeToString() for span in scope_spans.spans]
    unknown = bytes([0xC8, 0x06, 0x2A])  # field 105, varint 42
    # Unknown fields after the first span, after the spans and after the request's resource_spans.
    scope_body = (
        _field(1, scope_spans.scope.SerializeToString())
        + _field(2, spans[0])
        + unknown
        + b"".join(_field(2, span) for span in spans[1:])
        + unknown
    )
    resource_body = _field(1, resource_spans.resource.SerializeToString()) + _field(2, scope_body)
    body = _field(1, resource_body) + unknown
    cut = without_spans(body, {(0, 0, 0)})
    expected_scope = scope_body.replace(_field(2, spans[0]), b"", 1)
    expected_resource = _field(1, resource_spans.resource.SerializeToString()) + _field(2, expected_scope)
    assert cut == _field(1, expected_resource) + unknown


def test_a_group_field_is_not_stepped_over_and_says_so() -> None:
    request = encode(agent_spans(DEMO_RUNS[:1]))
    group = bytes([0x9B, 0x06, 0x08, 0x01, 0x9C, 0x06])  # field 99: start group, a varint, end group
    body = group + request.SerializeToString()
    assert (
        ExportTraceServiceRequest.FromString(body).resource_spans == request.resource_spans
    )  # protobuf takes it
    with pytest.raises(CutError, match="group"):
        without_spans(body, {(0, 0, 0)})


def test_naming_a_span_the_request_does_not_have_is_an_error() -> None:
    body = encode(agent_spans(DEMO_RUNS[:1])).SerializeToString()
    with pytest.raises(CutError):
        without_spans(body, {(0, 0, 1000)})
    with pytest.raises(CutError):
        without_spans(body, {(3, 0, 0)})


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field, as the protobuf encoding documentation spells it out."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
