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

The schema is built at run time, in the default descriptor pool so that resources, scopes and
events are opentelemetry-proto's own messages. Field numbers:
`opentelemetry/proto/{collector/trace,trace}/v1/*.proto`.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

_PACKAGE = "otel_scorers.otlp.span_bytes"
_Field = descriptor_pb2.FieldDescriptorProto
_REPEATED, _OPTIONAL = _Field.LABEL_REPEATED, _Field.LABEL_OPTIONAL
_MESSAGE, _STRING, _BYTES = _Field.TYPE_MESSAGE, _Field.TYPE_STRING, _Field.TYPE_BYTES

#: Each message's fields: name, number, type, label, message type.
_MESSAGES: dict[str, list[tuple[str, int, int, int, str]]] = {
    "Request": [("resource_spans", 1, _MESSAGE, _REPEATED, f".{_PACKAGE}.ResourceSpans")],
    "ResourceSpans": [
        ("resource", 1, _MESSAGE, _OPTIONAL, ".opentelemetry.proto.resource.v1.Resource"),
        ("scope_spans", 2, _MESSAGE, _REPEATED, f".{_PACKAGE}.ScopeSpans"),
        ("schema_url", 3, _STRING, _OPTIONAL, ""),
    ],
    "ScopeSpans": [
        ("scope", 1, _MESSAGE, _OPTIONAL, ".opentelemetry.proto.common.v1.InstrumentationScope"),
        ("spans", 2, _MESSAGE, _REPEATED, f".{_PACKAGE}.Span"),
        ("schema_url", 3, _STRING, _OPTIONAL, ""),
    ],
    "Span": [
        ("trace_id", 1, _BYTES, _OPTIONAL, ""),
        ("span_id", 2, _BYTES, _OPTIONAL, ""),
        ("parent_span_id", 4, _BYTES, _OPTIONAL, ""),
        ("name", 5, _STRING, _OPTIONAL, ""),
        # An enum in opentelemetry-proto, read as the number it is on the wire.
        ("kind", 6, _Field.TYPE_INT32, _OPTIONAL, ""),
        ("start_time_unix_nano", 7, _Field.TYPE_FIXED64, _OPTIONAL, ""),
        ("end_time_unix_nano", 8, _Field.TYPE_FIXED64, _OPTIONAL, ""),
        # Each a `KeyValue`, serialized.
        ("attributes", 9, _BYTES, _REPEATED, ""),
        ("events", 11, _MESSAGE, _REPEATED, ".opentelemetry.proto.trace.v1.Span.Event"),
        # A `Status`, serialized: empty for most spans (unset, no message).
        ("status", 15, _BYTES, _OPTIONAL, ""),
    ],
}


def _schema() -> descriptor_pb2.FileDescriptorProto:
    schema = descriptor_pb2.FileDescriptorProto(
        name="otel_scorers/otlp/span_bytes.proto",
        package=_PACKAGE,
        syntax="proto3",
        dependency=[resource_pb2.DESCRIPTOR.name, common_pb2.DESCRIPTOR.name, trace_pb2.DESCRIPTOR.name],
    )
    for name, fields in _MESSAGES.items():
        described = schema.message_type.add(name=name)
        for field_name, number, kind, label, type_name in fields:
            field = described.field.add(name=field_name, number=number, type=kind, label=label)
            if type_name:
                field.type_name = type_name
    return schema


def _message_class(name: str) -> Any:
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(_schema().name)
    except KeyError:
        pool.Add(_schema())
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))


#: The request read with this schema: `BytesRequest.FromString(payload)`.
BytesRequest: Any = _message_class("Request")
#: Its spans' class.
BytesSpan: Any = _message_class("Span")
