"""`ExportTraceServiceRequest` schemas that read a span with fewer of its fields, built at run time.

The same bytes on the wire: a reduced schema keeps opentelemetry-proto's field numbers and types
for the fields it names, and protobuf's decoder steps over the rest, keeping them as unknown
fields. Built in the default descriptor pool, so that resources, scopes and events are
opentelemetry-proto's own messages. Field numbers: `ExportTraceServiceRequest.resource_spans` 1;
`ResourceSpans.resource` 1, `scope_spans` 2, `schema_url` 3; `ScopeSpans.scope` 1, `spans` 2,
`schema_url` 3 (`opentelemetry/proto/{collector/trace,trace}/v1/*.proto`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.resource.v1 import resource_pb2

Field = descriptor_pb2.FieldDescriptorProto
#: A message's field: name, number, type, label, message type (empty for a scalar).
Fields = Sequence[tuple[str, int, int, int, str]]


def request_classes(
    package: str, span: Fields, *dependencies: str, present: Collection[str] = ()
) -> tuple[Any, Any]:
    """The classes of a request (`Request`) and of its spans (`Span`, of the fields `span`) in
    `package`, a schema of its own; `dependencies`, the files of the other messages it names.
    `present`: the span's fields read as a scalar that keep whether they were written, empty or
    not (proto3's `optional`), as a message field does: one written empty is written again."""
    repeated, optional = Field.LABEL_REPEATED, Field.LABEL_OPTIONAL
    message, string = Field.TYPE_MESSAGE, Field.TYPE_STRING
    messages: dict[str, Fields] = {
        "Request": [("resource_spans", 1, message, repeated, f".{package}.ResourceSpans")],
        "ResourceSpans": [
            ("resource", 1, message, optional, ".opentelemetry.proto.resource.v1.Resource"),
            ("scope_spans", 2, message, repeated, f".{package}.ScopeSpans"),
            ("schema_url", 3, string, optional, ""),
        ],
        "ScopeSpans": [
            ("scope", 1, message, optional, ".opentelemetry.proto.common.v1.InstrumentationScope"),
            ("spans", 2, message, repeated, f".{package}.Span"),
            ("schema_url", 3, string, optional, ""),
        ],
        "Span": span,
    }
    schema = _schema(
        package, messages, (resource_pb2.DESCRIPTOR.name, common_pb2.DESCRIPTOR.name, *dependencies), present
    )
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(schema.name)
    except KeyError:
        pool.Add(schema)
    request, span_class = (
        message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.{name}"))
        for name in ("Request", "Span")
    )
    return request, span_class


def _schema(
    package: str, messages: Mapping[str, Fields], dependencies: Sequence[str], present: Collection[str]
) -> descriptor_pb2.FileDescriptorProto:
    schema = descriptor_pb2.FileDescriptorProto(
        name=f"{package.replace('.', '/')}.proto", package=package, syntax="proto3", dependency=dependencies
    )
    for name, fields in messages.items():
        described = schema.message_type.add(name=name)
        for field_name, number, kind, label, type_name in fields:
            field = described.field.add(name=field_name, number=number, type=kind, label=label)
            if type_name:
                field.type_name = type_name
            if name == "Span" and field_name in present:
                # proto3 `optional`: a field of a oneof of its own, which holds its presence.
                field.proto3_optional = True
                field.oneof_index = len(described.oneof_decl)
                described.oneof_decl.add(name=f"_{field_name}")
    return schema
