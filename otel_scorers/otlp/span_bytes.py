"""`SpanRecord`s from spans read with `span_bytes_schema`: each attribute from its key-value's
serialized bytes, the ones seen before (a model's name, an operation, a tool's name, a token
count) by a dictionary lookup.

Most key-values of an agent's spans repeat from span to span and trace to trace, byte for byte
(in the sidecar bench's traces, four in five): the key and value a key-value's bytes decode to
are remembered, by those bytes, for key-values short enough to repeat (a model's messages, a
tool's result, an id, do not), whose value cannot be changed (a list or a map is made anew each
time). A remembered key-value costs a lookup, against about 5,000 instructions read through
protobuf's `KeyValue`, and its key and value are the same strings from span to span, whose
hashes the lookups of the conventions reading them need not compute again. The others are
parsed as a `KeyValue` each and read as `decode.attributes` reads them.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Status

from otel_scorers.otlp.decode import attributes, decode_any_value
from otel_scorers.span_record import KIND_NAMES, STATUS_NAMES, SpanEvent, SpanRecord, SpanStatus

#: Longest key-value remembered, in bytes serialized: a key with a short text, a number.
MAX_REMEMBERED_BYTES = 128
#: Key-values remembered at most, past which those remembered are forgotten and learned again.
MAX_REMEMBERED = 4096

_new_record = object.__new__

#: Key and value by a key-value's serialized bytes.
_remembered: dict[bytes, tuple[str, Any]] = {}

#: A status by its serialized bytes, for the ones without a message (nearly every span's): an
#: empty `Status` is unset, `code` (field 3) 1 is ok and 2 an error.
_STATUSES: dict[bytes, tuple[SpanStatus, None]] = {
    b"": ("unset", None),
    b"\x18\x00": ("unset", None),
    b"\x18\x01": ("ok", None),
    b"\x18\x02": ("error", None),
}


def remembered_count() -> int:
    """How many key-values are remembered."""
    return len(_remembered)


def _key_value(serialized: bytes) -> tuple[str, Any]:
    """One key-value read from its bytes, remembered when short and its value unchangeable."""
    kv = KeyValue.FromString(serialized)
    value = kv.value
    # As `decode.attributes` reads a value: a non-empty text, a non-zero integer, else its kind.
    text = value.string_value
    pair = (sys.intern(kv.key), text if text else value.int_value or decode_any_value(value))
    if len(serialized) <= MAX_REMEMBERED_BYTES and type(pair[1]) not in (list, dict):
        if len(_remembered) >= MAX_REMEMBERED:
            _remembered.clear()
        _remembered[serialized] = pair
    return pair


def key_value(serialized: bytes) -> tuple[str, Any]:
    """One key-value's key and value from its bytes (remembered when short and seen before)."""
    return _remembered.get(serialized) or _key_value(serialized)


def key_bytes(serialized: bytes) -> bytes | None:
    """A key-value's key as the bytes it is written with, read without parsing the key-value
    when it comes first (field 1, `0x0a`) with a length under 128 (one byte), as every SDK
    writes it; else None."""
    if serialized[:1] == b"\n" and len(serialized) > 1:
        length = serialized[1]
        if length < 0x80:
            return serialized[2 : 2 + length]
    return None


def key_of(serialized: bytes) -> str:
    """A key-value's key, its value not read when its key comes first (`key_bytes`)."""
    key = key_bytes(serialized)
    return key.decode() if key is not None else key_value(serialized)[0]


def text_value(value: Any) -> str:
    """A value as `AnyValue.string_value` reads it: its text, or empty when it is no text."""
    return value if type(value) is str else ""


def bytes_attributes(serialized: Sequence[bytes]) -> dict[str, Any]:
    """The attributes of a span read with `span_bytes_schema`, from each key-value's bytes."""
    converted = {}
    remembered = _remembered.get
    for kv in serialized:
        pair = remembered(kv)
        if pair is None:
            pair = _key_value(kv)
        converted[pair[0]] = pair[1]
    return converted


def _status(serialized: bytes) -> tuple[SpanStatus, str | None]:
    """A status with a message, or one `_STATUSES` does not hold."""
    status = Status.FromString(serialized)
    code = status.code
    return STATUS_NAMES[code] if 0 <= code < len(STATUS_NAMES) else "unset", status.message or None  # type: ignore[return-value]


def bytes_span_record(span: Any, resource: Mapping[str, Any], scope: str, trace_id: int) -> SpanRecord:
    """A span read with `span_bytes_schema` (`BytesSpan`) as a record; `trace_id`: its trace's,
    read once for the spans of a trace."""
    # Made through its slots: calling the class goes through `type.__call__` and `__init__` with
    # thirteen arguments, about 1,500 instructions more a span. Every field is set here.
    record = _new_record(SpanRecord)
    record.trace_id = trace_id
    record.span_id = int.from_bytes(span.span_id, "big")
    parent = span.parent_span_id
    record.parent_span_id = int.from_bytes(parent, "big") if parent else None
    record.name = span.name
    kind = span.kind
    record.kind = KIND_NAMES[kind] if 0 <= kind < len(KIND_NAMES) else "unspecified"
    record.start_ns = span.start_time_unix_nano
    record.end_ns = span.end_time_unix_nano or None
    status = span.status
    record.status, record.status_message = _STATUSES.get(status) or _status(status)
    record.attributes = bytes_attributes(span.attributes[:])
    events = span.events
    record.events = (
        tuple(
            SpanEvent(event.name, event.time_unix_nano, attributes(event.attributes)) for event in events[:]
        )
        if events
        else ()
    )
    record.resource = resource
    record.scope = scope
    return record
