"""A protobuf request that fails to parse because of a few bad spans (a string that is not UTF-8,
say) is taken apart along the OTLP wire format instead: every span that parses on its own is
kept, and the others are rejected alone, as a partial success."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

_LEN = 2


@dataclass(frozen=True, slots=True)
class Salvaged:
    request: ExportTraceServiceRequest
    rejected: int
    problem: str


def read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def _fields(data: bytes) -> Iterator[tuple[int, bytes | None]]:
    """(field number, bytes) of each length-delimited field; None for the other wire types."""
    at = 0
    while at < len(data):
        tag, at = read_varint(data, at)
        wire = tag & 7
        if wire == _LEN:
            size, at = read_varint(data, at)
            if at + size > len(data):
                raise ValueError("truncated field")
            yield tag >> 3, data[at : at + size]
            at += size
        elif wire == 0:
            _, at = read_varint(data, at)
            yield tag >> 3, None
        elif wire in (1, 5):
            at += 8 if wire == 1 else 4
            yield tag >> 3, None
        else:
            raise ValueError(f"unsupported wire type {wire}")


def salvage(data: bytes) -> Salvaged | None:
    """The request without its spans that do not parse, or None when the request's own structure
    (not a span's) is what is broken."""
    request = ExportTraceServiceRequest()
    rejected = 0
    problem = ""
    try:
        for number, resource_bytes in _fields(data):
            if number != 1 or resource_bytes is None:
                continue
            resource_spans = request.resource_spans.add()
            for field, value in _fields(resource_bytes):
                if value is None:
                    continue
                if field == 1:
                    resource_spans.resource.ParseFromString(value)
                elif field == 3:
                    resource_spans.schema_url = value.decode()
                elif field == 2:
                    scope_spans = resource_spans.scope_spans.add()
                    for inner, part in _fields(value):
                        if part is None:
                            continue
                        if inner == 1:
                            scope_spans.scope.ParseFromString(part)
                        elif inner == 3:
                            scope_spans.schema_url = part.decode()
                        elif inner == 2:
                            try:
                                scope_spans.spans.append(Span.FromString(part))
                            except DecodeError as exc:
                                rejected += 1
                                problem = problem or f"a span does not parse: {exc}"
    except (ValueError, DecodeError):  # UnicodeDecodeError is a ValueError
        return None
    if not rejected:
        return None  # the spans were fine: the problem is elsewhere
    return Salvaged(request, rejected, problem)
