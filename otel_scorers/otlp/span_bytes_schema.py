"""`ExportTraceServiceRequest` read with a schema of the fields a span's record is made from, its
attributes kept as each key-value's serialized bytes and its status as the bytes of its message.

A scoring process converts every span it is handed (`span_bytes.bytes_span_record`). Read through
opentelemetry-proto's classes, each attribute is a `KeyValue` wrapper, its key, an `AnyValue`
wrapper and the value's string, each found by its field's name (about 5,000 instructions an
attribute), and each span's status one wrapper more. Here protobuf's decoder keeps each key-value
as bytes (no `KeyValue` nor `AnyValue` made, nor their UTF-8 checked, which decoding them to text
does), so that a key-value seen before is one dictionary lookup by its bytes. A span's other
fields (its trace state, links, dropped counts, flags) are no record's: they are stepped over,
kept as unknown fields. The same bytes on the wire: the request parses with either schema.

Built at run time (`reduced_schema`). Field numbers: `opentelemetry/proto/trace/v1/trace.proto`.
"""

from __future__ import annotations

from opentelemetry.proto.trace.v1 import trace_pb2

from otel_scorers.otlp.reduced_schema import Field, request_classes

_REPEATED, _OPTIONAL = Field.LABEL_REPEATED, Field.LABEL_OPTIONAL
_MESSAGE, _STRING, _BYTES = Field.TYPE_MESSAGE, Field.TYPE_STRING, Field.TYPE_BYTES

#: A span's fields that make its record.
_SPAN = [
    ("trace_id", 1, _BYTES, _OPTIONAL, ""),
    ("span_id", 2, _BYTES, _OPTIONAL, ""),
    ("parent_span_id", 4, _BYTES, _OPTIONAL, ""),
    ("name", 5, _STRING, _OPTIONAL, ""),
    # An enum in opentelemetry-proto, read as the number it is on the wire.
    ("kind", 6, Field.TYPE_INT32, _OPTIONAL, ""),
    ("start_time_unix_nano", 7, Field.TYPE_FIXED64, _OPTIONAL, ""),
    ("end_time_unix_nano", 8, Field.TYPE_FIXED64, _OPTIONAL, ""),
    # Each a `KeyValue`, serialized.
    ("attributes", 9, _BYTES, _REPEATED, ""),
    ("events", 11, _MESSAGE, _REPEATED, ".opentelemetry.proto.trace.v1.Span.Event"),
    # A `Status`, serialized: empty for most spans (unset, no message). Its presence is kept
    # (`present`), so that a span written again holds it as received.
    ("status", 15, _BYTES, _OPTIONAL, ""),
]

#: The request read with this schema (`BytesRequest.FromString(payload)`), and its spans' class.
BytesRequest, BytesSpan = request_classes(
    "otel_scorers.otlp.span_bytes", _SPAN, trace_pb2.DESCRIPTOR.name, present=("status",)
)
