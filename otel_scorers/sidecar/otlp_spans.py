"""Received OTLP spans, kept as protobuf and converted to `SpanRecord` only when a run needs them.

A request's spans stay the protobuf messages they were parsed into. Each carries an `Origin`
(its resource and scope, shared by every span of that scope) and the `Batch` it came in: the
parsed request lives as one block of memory until its last buffered span is released, so memory
is accounted per request, not per span.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import InstrumentationScope
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from otel_scorers.otlp.decode import attributes, span_record
from otel_scorers.otlp.span_bytes import bytes_span_record
from otel_scorers.otlp.span_bytes_schema import BytesSpan
from otel_scorers.span_record import SpanRecord


@dataclass(slots=True, eq=False)
class Batch:
    """One received request: its size, and how many of its spans are still buffered or held."""

    size: int
    refs: int = 0


@dataclass(slots=True, eq=False)
class Origin:
    """The resource and scope a span was sent under; the resource is converted once, on demand,
    and so is the scope's name."""

    resource: Resource
    scope: InstrumentationScope
    schema_url: str
    batch: Batch
    _resource_attributes: Mapping[str, Any] | None = field(default=None, repr=False)
    _scope_name: str | None = field(default=None, repr=False)

    def resource_attributes(self) -> Mapping[str, Any]:
        if self._resource_attributes is None:
            self._resource_attributes = attributes(self.resource.attributes)
        return self._resource_attributes

    def scope_name(self) -> str:
        """The scope's name, one string for every span of the scope: each read from protobuf
        makes a new one, whose hash every lookup by scope (a span's convention, its framework)
        would compute again."""
        if self._scope_name is None:
            self._scope_name = self.scope.name
        return self._scope_name


@dataclass(slots=True, eq=False)
class OtlpSpan:
    """A received span and its origin. A span of a protobuf request is read with
    `span_bytes_schema` (`BytesSpan`: its attributes as bytes), converted by its own function;
    one of an OTLP/JSON request, or of a request read for its trace ids first, is
    opentelemetry-proto's `Span`."""

    span: Span
    origin: Origin

    def record(self) -> SpanRecord:
        origin = self.origin
        span = self.span
        if type(span) is BytesSpan:
            trace_id = int.from_bytes(span.trace_id, "big")
            return bytes_span_record(span, origin.resource_attributes(), origin.scope_name(), trace_id)
        return span_record(span, origin.resource_attributes(), origin.scope_name())


def trace_records(spans: Sequence[OtlpSpan]) -> list[SpanRecord]:
    """The spans of one trace converted (`OtlpSpan.record`), a trace's at a time: its trace id is
    read from its first span alone, and its spans share one or a few origins, whose resource and
    scope are looked up once per run of spans of the same origin rather than by a call for each
    span. Spans read with `span_bytes_schema` (a scoring process's) are converted from their
    attributes' bytes."""
    records: list[SpanRecord] = []
    last: Origin | None = None
    resource: Mapping[str, Any] = {}
    scope = ""
    if not spans:
        return records
    first = spans[0].span
    trace_id = int.from_bytes(first.trace_id, "big")
    convert: Any = span_record
    for item in spans:
        origin = item.origin
        if origin is not last:
            # An origin's spans came in one request, read with one schema; a trace's requests
            # may differ (OTLP/JSON, protobuf).
            last, resource, scope = origin, origin.resource_attributes(), origin.scope_name()
            convert = bytes_span_record if type(item.span) is BytesSpan else span_record
        records.append(convert(item.span, resource, scope, trace_id))
    return records
