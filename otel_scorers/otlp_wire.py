"""Evaluation spans and `gen_ai.evaluation.result` log records written straight in OTLP's protobuf
wire format, and the export requests that carry them.

The SDK's encoders build a protobuf object per span, per attribute and per value before they
serialise: about 20 µs a span, several times what the rest of scoring a run costs. An evaluation
span or event has a fixed shape (a few attributes, no events or links), so it is written as bytes
directly, field by field in field-number order as protobuf's own serialiser does, from byte strings
made once per key and per repeated attribute set. The result decodes to the same messages the
SDK's encoders produce for the SDK span and log record the emitter made before (tests hold
the two side by side).

Field numbers: `opentelemetry/proto/{common,resource,trace,logs}/v1/*.proto`.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any

# Wire types.
_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5
_pack_double = struct.Struct("<d").pack
_pack_fixed64 = struct.Struct("<Q").pack
_pack_fixed32 = struct.Struct("<I").pack
_MAX_CACHED_KEYS = 4096


def varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64  # int64 two's complement, as protobuf writes negative ints
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def tag(field: int, wire_type: int) -> bytes:
    return varint(field << 3 | wire_type)


def length_delimited(field: int, payload: bytes) -> bytes:
    return tag(field, _LEN) + varint(len(payload)) + payload


def any_value(value: Any) -> bytes:
    """An `AnyValue` message (bool before int: a bool is an int in Python)."""
    if isinstance(value, bool):
        return b"\x10\x01" if value else b"\x10\x00"
    if isinstance(value, str):
        return length_delimited(1, value.encode())
    if isinstance(value, int):
        return b"\x18" + varint(value)
    if isinstance(value, float):
        return b"\x21" + _pack_double(value)
    if isinstance(value, bytes):
        return length_delimited(7, value)
    if isinstance(value, Sequence):
        return length_delimited(5, b"".join(length_delimited(1, any_value(item)) for item in value))
    if isinstance(value, Mapping):
        return length_delimited(
            6, b"".join(length_delimited(1, key_value(str(k), v)) for k, v in value.items())
        )
    raise TypeError(f"cannot encode attribute value {value!r} of type {type(value).__name__}")


def key_value(key: str, value: Any) -> bytes:
    """A `KeyValue` message."""
    return length_delimited(1, key.encode()) + length_delimited(2, any_value(value))


class AttributeWriter:
    """Repeated `KeyValue` fields for a message, remembering the encoding of attribute sets seen
    before: a check's results repeat (same scorer, value, label and reason run after run)."""

    def __init__(self, field: int) -> None:
        self._tag = tag(field, _LEN)
        self._cache: dict[tuple[tuple[str, Any], ...], bytes] = {}

    def __call__(self, attributes: Mapping[str, Any]) -> bytes:
        key = tuple(attributes.items())
        try:
            found = self._cache.get(key)
        except TypeError:  # an unhashable value (a list): encode without remembering
            return self._encode(attributes)
        if found is None:
            found = self._encode(attributes)
            if len(self._cache) >= _MAX_CACHED_KEYS:
                self._cache.clear()  # bounded: unique reasons (judge explanations) would grow it
            self._cache[key] = found
        return found

    def _encode(self, attributes: Mapping[str, Any]) -> bytes:
        prefix = self._tag
        parts = []
        for name, value in attributes.items():
            entry = key_value(name, value)
            parts.append(prefix + varint(len(entry)) + entry)
        return b"".join(parts)


#: `Span.flags`: the SDK's exporters say whether the parent was remote (ours never is).
_SPAN_FLAGS_HAS_IS_REMOTE = 0x100
_SPAN_KIND_INTERNAL = 1
_STATUS_ERROR = 2
_SPAN_TAIL_PREFIX = b"\x85\x01"  # field 16 (flags), fixed32


def evaluation_span(
    trace_id: int,
    span_id: int,
    parent_span_id: int,
    name: bytes,
    start_ns: int,
    end_ns: int,
    attributes: bytes,
    error_message: str | None,
) -> bytes:
    """One `Span` message: INTERNAL, sampled, no events or links, status UNSET or ERROR.
    `name` is the encoded name field (see `name_field`), `attributes` from an `AttributeWriter(9)`."""
    if error_message is None:
        status = b"\x7a\x00"  # field 15, an empty Status: the SDK always writes one
    else:
        status = length_delimited(15, length_delimited(2, error_message.encode()) + b"\x18\x02")
    return b"".join(
        (
            b"\x0a\x10",
            trace_id.to_bytes(16, "big"),
            b"\x12\x08",
            span_id.to_bytes(8, "big"),
            b"\x22\x08",
            parent_span_id.to_bytes(8, "big"),
            name,
            b"\x30\x01",  # kind INTERNAL
            b"\x39",
            _pack_fixed64(start_ns),
            b"\x41",
            _pack_fixed64(end_ns),
            attributes,
            status,
            _SPAN_TAIL_PREFIX,
            _pack_fixed32(_SPAN_FLAGS_HAS_IS_REMOTE),
        )
    )


def name_field(field: int, name: str) -> bytes:
    """A string field written once (a span's name, an event's name)."""
    return length_delimited(field, name.encode())


def evaluation_log(
    time_ns: int, observed_ns: int, trace_id: int, span_id: int, attributes: bytes, event_name: bytes
) -> bytes:
    """One `LogRecord`: an event in a sampled span's context, no body or severity (the SDK writes
    an empty body). `attributes` from an `AttributeWriter(6)`, `event_name` from `name_field(12, ...)`."""
    return b"".join(
        (
            b"\x09",
            _pack_fixed64(time_ns),
            b"\x2a\x00",  # body: an empty AnyValue
            attributes,
            b"\x45\x01\x00\x00\x00",  # flags: sampled
            b"\x4a\x10",
            trace_id.to_bytes(16, "big"),
            b"\x52\x08",
            span_id.to_bytes(8, "big"),
            b"\x59",
            _pack_fixed64(observed_ns),
            event_name,
        )
    )


def resource_message(attributes: Mapping[str, Any], dropped: int = 0) -> bytes:
    """A `Resource` message."""
    body = AttributeWriter(1)._encode(attributes)
    return body + (b"\x10" + varint(dropped) if dropped else b"")


def scope_message(name: str, version: str | None) -> bytes:
    """An `InstrumentationScope` message."""
    return length_delimited(1, name.encode()) + (length_delimited(2, version.encode()) if version else b"")


def export_request(resource: bytes, resource_schema_url: str, scope: bytes, items: Sequence[bytes]) -> bytes:
    """An `ExportTraceServiceRequest` or `ExportLogsServiceRequest` with one resource and one scope
    (the two share their layout: resource_*, then scope_*, then the spans or log records, all
    field 2 of their parent; schema URLs field 3)."""
    records = b"".join(b"\x12" + varint(len(item)) + item for item in items)
    scoped = length_delimited(1, scope) + records
    resource_block = length_delimited(1, resource) + length_delimited(2, scoped)
    if resource_schema_url:
        resource_block += length_delimited(3, resource_schema_url.encode())
    return length_delimited(1, resource_block)
