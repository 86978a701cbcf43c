"""OTLP trace payloads (protobuf or OTLP/JSON) to `SpanRecord`s, with opentelemetry-proto's classes."""

from __future__ import annotations

import base64
import binascii
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import orjson
from google.protobuf.json_format import ParseDict, ParseError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from otel_scorers.span_record import KIND_NAMES, STATUS_NAMES, SpanEvent, SpanRecord
from otel_scorers.throttled_log import throttled

_ID_KEYS = ("traceId", "spanId", "parentSpanId")


class OtlpDecodeError(ValueError):
    """The payload is not a valid OTLP trace export request."""


#: OTLP's ids: a trace's 16 bytes and a span's 8, neither all zeros; a parent's 8, or none. A
#: span with other ids is refused alone: ids of another length read as other numbers (a 3-byte
#: trace id as a small one shared by unrelated senders, a 20-byte one as more than an evaluation
#: span can carry), all zeros as no id.
TRACE_ID_BYTES = 16
SPAN_ID_BYTES = 8
_ZERO_TRACE_ID = bytes(TRACE_ID_BYTES)
_ZERO_SPAN_ID = bytes(SPAN_ID_BYTES)


def invalid_trace_id(trace_id: bytes) -> str | None:
    """What is wrong with a span's trace id (`an invalid trace_id (3 bytes)`), or None."""
    if len(trace_id) != TRACE_ID_BYTES:
        return f"an invalid trace_id ({len(trace_id)} bytes, not {TRACE_ID_BYTES})"
    return "an invalid trace_id (all zeros)" if trace_id == _ZERO_TRACE_ID else None


def invalid_span_ids(span_id: bytes, parent_span_id: bytes) -> str | None:
    """What is wrong with a span's own and parent span ids, or None."""
    if len(span_id) != SPAN_ID_BYTES:
        return f"an invalid span_id ({len(span_id)} bytes, not {SPAN_ID_BYTES})"
    if span_id == _ZERO_SPAN_ID:
        return "an invalid span_id (all zeros)"
    if parent_span_id and len(parent_span_id) != SPAN_ID_BYTES:
        return f"an invalid parent_span_id ({len(parent_span_id)} bytes, not {SPAN_ID_BYTES})"
    return None


def _hex_id_to_base64(value: Any) -> Any:
    # OTLP/JSON writes ids as hex where protobuf's JSON mapping expects base64. Hex of any
    # length is read as hex, so that an id of the wrong length is refused for its own length
    # (`invalid_trace_id`); base64 of an 8 or 16-byte id always ends in `=`, never hex.
    if isinstance(value, str) and len(value) % 2 == 0:
        try:
            return base64.b64encode(bytes.fromhex(value)).decode()
        except ValueError:
            return value
    return value


def _fix_ids(span_or_link: dict[str, Any]) -> None:
    for key in _ID_KEYS:
        if key in span_or_link:
            span_or_link[key] = _hex_id_to_base64(span_or_link[key])


def utf8_replaced(data: bytes, where: str) -> bytes | None:
    """`data` with its bytes that are not UTF-8 (a span's name, say) as U+FFFD, logged at most
    once a minute naming `where`; None when it is UTF-8. A request or a line holding such bytes
    was refused whole for them."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        throttled.warning(
            "otlp_json_utf8",
            "otel_scorers: %s holds bytes that are not UTF-8 (the first at byte %d): read with "
            "U+FFFD in their place",
            where,
            exc.start,
        )
        return data.decode("utf-8", "replace").encode()
    return None


def loads_replacing(data: bytes, where: str) -> Any:
    """`orjson.loads`, a document holding bytes that are not UTF-8 read with them replaced
    (`utf8_replaced`); other faults raise as ever."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        replaced = utf8_replaced(data, where)
        if replaced is None:
            raise
        return orjson.loads(replaced)


def parse_json_request(data: bytes | str | Mapping[str, Any]) -> ExportTraceServiceRequest:
    """Parse one OTLP/JSON `ExportTraceServiceRequest`."""
    try:
        document = orjson.loads(data) if isinstance(data, (bytes, str)) else dict(data)
    except orjson.JSONDecodeError as exc:
        raise OtlpDecodeError(f"not JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise OtlpDecodeError(f"expected a JSON object with resourceSpans, got {type(document).__name__}")
    try:
        for resource_spans in document.get("resourceSpans") or ():
            for scope_spans in resource_spans.get("scopeSpans") or ():
                for span in scope_spans.get("spans") or ():
                    _fix_ids(span)
                    for link in span.get("links") or ():
                        _fix_ids(link)
        request: ExportTraceServiceRequest = ParseDict(
            document, ExportTraceServiceRequest(), ignore_unknown_fields=True
        )
        return request
    # json_format's ParseError is not a ValueError.
    except (AttributeError, TypeError, ValueError, binascii.Error, ParseError) as exc:
        raise OtlpDecodeError(f"not an OTLP trace request: {exc}") from exc


def hex_ids_as_base64(document: Any) -> Any:
    """An OTLP/JSON logs request's record ids, hex as the specification writes them, in the
    base64 protobuf's JSON mapping reads (ids already in base64 are left as they are)."""
    if not isinstance(document, dict):
        return document
    for resource_logs in document.get("resourceLogs") or ():
        for scope_logs in (resource_logs.get("scopeLogs") or ()) if isinstance(resource_logs, dict) else ():
            for record in (scope_logs.get("logRecords") or ()) if isinstance(scope_logs, dict) else ():
                if isinstance(record, dict):
                    _fix_ids(record)
    return document


def parse_protobuf_request(data: bytes) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(data)
    except Exception as exc:  # protobuf raises DecodeError, or RuntimeWarning subclasses
        raise OtlpDecodeError(f"not an OTLP protobuf trace request: {exc}") from exc
    return request


def decode_any_value(value: AnyValue) -> Any:
    """An OTLP `AnyValue` as a plain Python value."""
    which = value.WhichOneof("value")
    if which == "string_value":
        return value.string_value
    if which == "bool_value":
        return value.bool_value
    if which == "int_value":
        return value.int_value
    if which == "double_value":
        return value.double_value
    if which == "array_value":
        return [decode_any_value(item) for item in value.array_value.values[:]]
    if which == "kvlist_value":
        return {kv.key: decode_any_value(kv.value) for kv in value.kvlist_value.values[:]}
    if which == "bytes_value":
        return bytes(value.bytes_value)
    return None


def attributes(kvs: Any) -> dict[str, Any]:
    """The key-values as a dict, each key interned: the same key on every span is then one
    string, which the conventions' lookups and the tuples of keys they remember (a kind of
    span) compare by identity rather than character by character."""
    converted = {}
    intern = sys.intern
    # Walked as a slice (a list): iterating a repeated protobuf field itself ends on an
    # IndexError whose message upb formats, which costs as much as reading a key.
    for kv in kvs[:]:
        value = kv.value
        # Most attribute values are non-empty strings: read first, they need no `WhichOneof`
        # (an empty string is also what every other kind of value reads as).
        text = value.string_value
        if text:
            converted[intern(kv.key)] = text
        else:
            # Next most are integers (token counts): a non-zero one is set, without a call.
            number = value.int_value
            converted[intern(kv.key)] = number if number else decode_any_value(value)
    return converted


def find_attribute(kvs: Any, key: str) -> KeyValue | None:
    for kv in kvs:
        if kv.key == key:
            found: KeyValue = kv
            return found
    return None


def span_record(
    span: Span, resource: Mapping[str, Any], scope: str, trace_id: int | None = None
) -> SpanRecord:
    """`trace_id`: the span's, when the caller knows it already (the spans of one trace)."""
    # Each field read from a protobuf message makes a Python object (a submessage, a wrapper):
    # every one is read once, and the usual cases (no events, a known kind) answered first.
    parent = span.parent_span_id
    kind = span.kind
    status = span.status
    code = status.code
    events = span.events
    return SpanRecord(
        int.from_bytes(span.trace_id, "big") if trace_id is None else trace_id,
        int.from_bytes(span.span_id, "big"),
        int.from_bytes(parent, "big") if parent else None,
        span.name,
        KIND_NAMES[kind] if 0 <= kind < len(KIND_NAMES) else "unspecified",
        span.start_time_unix_nano,
        span.end_time_unix_nano or None,
        STATUS_NAMES[code] if 0 <= code < len(STATUS_NAMES) else "unset",  # type: ignore[arg-type]
        status.message or None,
        attributes(span.attributes),
        tuple(
            SpanEvent(event.name, event.time_unix_nano, attributes(event.attributes)) for event in events[:]
        )
        if events
        else (),
        resource,
        scope,
    )


def span_records(
    request: ExportTraceServiceRequest, refused: list[str] | None = None
) -> Iterator[SpanRecord]:
    """Every span of the request, fully converted (the offline path; the sidecar converts lazily).
    A span whose ids are not OTLP's is left out, what is wrong with it added to `refused`."""
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            scope = scope_spans.scope.name
            for span in scope_spans.spans:
                problem = invalid_trace_id(span.trace_id) or invalid_span_ids(
                    span.span_id, span.parent_span_id
                )
                if problem is None:
                    yield span_record(span, resource, scope)
                elif refused is not None:
                    refused.append(f"span {span.name!r} has {problem}")
