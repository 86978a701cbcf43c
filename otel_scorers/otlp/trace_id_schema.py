"""`ExportTraceServiceRequest` read with a reduced schema: its resources and scopes whole, and of
each span its trace id alone.

Deciding which spans of a request some binding may sample needs only their trace ids; parsing
every span in full (its attributes, events and links, each a message of its own, every string's
UTF-8 checked) is most of what reading a request costs. With this schema protobuf's decoder
steps over the rest of each span, keeping its bytes as unknown fields, so that a span found to be
sampled is parsed in full from exactly what was received (`full_span`) and the request, spans
taken out of it, is encoded again whole. The schema is built at run time from the one
opentelemetry-proto gives (same field numbers and types), in the default descriptor pool so that
its resources and scopes are opentelemetry-proto's own messages.

Field numbers: `ExportTraceServiceRequest.resource_spans` 1; `ResourceSpans.resource` 1,
`scope_spans` 2, `schema_url` 3; `ScopeSpans.scope` 1, `spans` 2, `schema_url` 3; `Span.trace_id`
1 (`opentelemetry/proto/{collector/trace,trace}/v1/*.proto`).
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1.trace_pb2 import Span

_PACKAGE = "otel_scorers.otlp.trace_ids"
_Field = descriptor_pb2.FieldDescriptorProto


def _schema() -> descriptor_pb2.FileDescriptorProto:
    schema = descriptor_pb2.FileDescriptorProto(
        name="otel_scorers/otlp/trace_ids.proto",
        package=_PACKAGE,
        syntax="proto3",
        dependency=[resource_pb2.DESCRIPTOR.name, common_pb2.DESCRIPTOR.name],
    )
    repeated, optional = _Field.LABEL_REPEATED, _Field.LABEL_OPTIONAL
    message, string = _Field.TYPE_MESSAGE, _Field.TYPE_STRING
    messages: dict[str, list[tuple[str, int, int, int, str]]] = {
        "Request": [("resource_spans", 1, message, repeated, f".{_PACKAGE}.ResourceSpans")],
        "ResourceSpans": [
            ("resource", 1, message, optional, ".opentelemetry.proto.resource.v1.Resource"),
            ("scope_spans", 2, message, repeated, f".{_PACKAGE}.ScopeSpans"),
            ("schema_url", 3, string, optional, ""),
        ],
        "ScopeSpans": [
            ("scope", 1, message, optional, ".opentelemetry.proto.common.v1.InstrumentationScope"),
            ("spans", 2, message, repeated, f".{_PACKAGE}.SpanTraceId"),
            ("schema_url", 3, string, optional, ""),
        ],
        "SpanTraceId": [("trace_id", 1, _Field.TYPE_BYTES, optional, "")],
    }
    for name, fields in messages.items():
        described = schema.message_type.add(name=name)
        for field_name, number, kind, label, type_name in fields:
            field = described.field.add(name=field_name, number=number, type=kind, label=label)
            if type_name:
                field.type_name = type_name
    return schema


def _request_class() -> Any:
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(_schema().name)
    except KeyError:
        pool.Add(_schema())
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.Request"))


#: The reduced `ExportTraceServiceRequest`: `TraceIdRequest.FromString(body)` raises protobuf's
#: `DecodeError` for bytes whose framing, resources or scopes do not parse.
TraceIdRequest: Any = _request_class()


def full_span(span: Any) -> Span:
    """A span of a `TraceIdRequest` parsed in full (its trace id and the fields stepped over);
    raises `DecodeError` when those do not parse (a string that is not UTF-8, say)."""
    parsed: Span = Span.FromString(span.SerializeToString())
    return parsed
