"""`ExportTraceServiceRequest` read with a reduced schema: its resources and scopes whole, and of
each span its trace id alone.

Deciding which spans of a request some binding may sample needs only their trace ids; parsing
every span in full (its attributes, events and links, each a message of its own, every string's
UTF-8 checked) is most of what reading a request costs. With this schema protobuf's decoder
steps over the rest of each span, keeping its bytes as unknown fields, so that a span found to be
sampled is parsed in full from exactly what was received (`full_span`) and the request, spans
taken out of it, is encoded again whole. Built at run time (`reduced_schema`): `Span.trace_id` 1.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.trace.v1.trace_pb2 import Span

from otel_scorers.otlp.reduced_schema import Field, request_classes

#: The reduced `ExportTraceServiceRequest`: `TraceIdRequest.FromString(body)` raises protobuf's
#: `DecodeError` for bytes whose framing, resources or scopes do not parse.
TraceIdRequest: Any = request_classes(
    "otel_scorers.otlp.trace_ids", [("trace_id", 1, Field.TYPE_BYTES, Field.LABEL_OPTIONAL, "")]
)[0]


def full_span(span: Any) -> Span:
    """A span of a `TraceIdRequest` parsed in full (its trace id and the fields stepped over);
    raises `DecodeError` when those do not parse (a string that is not UTF-8, say)."""
    parsed: Span = Span.FromString(span.SerializeToString())
    return parsed
