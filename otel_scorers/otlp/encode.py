"""Evaluation spans and `gen_ai.evaluation.result` log records written straight in OTLP's protobuf
wire format, and the export requests that carry them.

The SDK's encoders build a protobuf object per span, per attribute and per value before they
serialise: about 20 µs a span, several times what the rest of scoring a run costs. An evaluation
span or event has a fixed shape (a few attributes, no events or links), so it is written as bytes
directly, field by field in field-number order as protobuf's own serialiser does, from byte strings
made once per scorer and verdict (see `ScoreParts`). The result decodes to the same messages the
SDK's encoders produce for the span and log record that the SDK output makes of the same score
(tests hold the two side by side).

Field numbers: `opentelemetry/proto/{common,resource,trace,logs}/v1/*.proto`.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# Wire types.
_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5
_pack_double = struct.Struct("<d").pack
_pack_fixed64 = struct.Struct("<Q").pack
_pack_fixed32 = struct.Struct("<I").pack
_getrandbits = random.getrandbits


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


def encode_any_value(value: Any) -> bytes:
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
        return length_delimited(5, b"".join(length_delimited(1, encode_any_value(item)) for item in value))
    if isinstance(value, Mapping):
        return length_delimited(
            6, b"".join(length_delimited(1, key_value(str(k), v)) for k, v in value.items())
        )
    raise TypeError(f"cannot encode attribute value {value!r} of type {type(value).__name__}")


def key_value(key: str, value: Any) -> bytes:
    """A `KeyValue` message."""
    return length_delimited(1, key.encode()) + length_delimited(2, encode_any_value(value))


def attributes_field(field: int, attributes: Mapping[str, Any]) -> bytes:
    """A message's repeated `KeyValue` field `field`."""
    prefix = tag(field, _LEN)
    parts = []
    for name, value in attributes.items():
        entry = key_value(name, value)
        parts.append(prefix + varint(len(entry)) + entry)
    return b"".join(parts)


#: `Span.flags`: the SDK's exporters say whether the parent was remote (ours never is).
_SPAN_FLAGS_HAS_IS_REMOTE = 0x100
_SPAN_FLAGS_IS_REMOTE = 0x200
_SPAN_KIND_INTERNAL = 1
_STATUS_ERROR = 2
_TRACE_FLAGS_SAMPLED = 1
_SPAN_FLAGS = tag(16, _FIXED32) + _pack_fixed32(_SPAN_FLAGS_HAS_IS_REMOTE)


#: Size of a span's id fields as `span_ids` writes them (trace id, span id, parent id).
SPAN_IDS_SIZE = 2 + 16 + 2 + 8 + 2 + 8
#: The tag of a `Span` in `ScopeSpans.spans` and of a `LogRecord` in `ScopeLogs.log_records`.
_RECORD_TAG = b"\x12"


@dataclass(frozen=True, slots=True, eq=False)
class ScoreParts:
    """What one evaluation span and its event share with every other of the same scorer,
    verdict and agent, written once, with the struct that writes each span (and each event)
    whole around what changes from one to the next. Every span and event of these parts has the
    same size, so each is written already framed as an entry of its scope's records: a batch's
    request joins them as they are.

    A span: its frame (the tag and length of an entry), its trace id field, its own id, its
    parent's id field, its name and kind, its times, and after them its attributes, status and
    flags (`span_tail`). An event: its frame, its time, its body, attributes and flags
    (`log_middle`), and its trace context, observed time and event name (the same for every
    event of a run: `log_context`)."""

    span_head: bytes
    span_middle: bytes
    span_tail: bytes
    #: (span_head, trace id field, span id, parent id field, span_middle, start, end tag, end,
    #: span_tail): the span's entry.
    pack_span: Callable[..., bytes]
    log_head: bytes
    log_middle: bytes
    #: (log_head, time, log_middle, log_context): the event's entry.
    pack_log: Callable[..., bytes]


def score_parts(
    span_name: str,
    attributes: Mapping[str, Any],
    error_message: str | None,
    links: bytes = b"",
    *,
    event_name: str,
) -> ScoreParts:
    """The constant parts of an evaluation span (INTERNAL, no events, the `links` written by
    `span_links`, status UNSET or ERROR) and of its `event_name` log record (no severity, an
    empty body as the SDK writes, the same attributes)."""
    if error_message is None:
        status = b"\x7a\x00"  # field 15, an empty Status: the SDK always writes one
    else:
        status = length_delimited(
            15, length_delimited(2, error_message.encode()) + b"\x18" + varint(_STATUS_ERROR)
        )
    # The name and kind, then the start time's tag.
    span_middle = length_delimited(5, span_name.encode()) + b"\x30" + varint(_SPAN_KIND_INTERNAL) + b"\x39"
    span_tail = attributes_field(9, attributes) + links + status + _SPAN_FLAGS
    log_middle = b"\x2a\x00" + attributes_field(6, attributes) + b"\x45" + _pack_fixed32(_TRACE_FLAGS_SAMPLED)
    context_size = log_context_size(event_name)
    span_size = SPAN_IDS_SIZE + len(span_middle) + 8 + 9 + len(span_tail)
    log_size = 9 + len(log_middle) + context_size
    # The frame, then the trace id's tag and length.
    span_head = _RECORD_TAG + varint(span_size) + b"\x0a\x10"
    log_head = _RECORD_TAG + varint(log_size) + b"\x09"  # the frame, then the time's tag
    return ScoreParts(
        span_head=span_head,
        span_middle=span_middle,
        span_tail=span_tail,
        pack_span=struct.Struct(f"<{len(span_head)}s18sQ10s{len(span_middle)}sQBQ{len(span_tail)}s").pack,
        log_head=log_head,
        log_middle=log_middle,
        pack_log=struct.Struct(f"<{len(log_head)}sQ{len(log_middle)}s{context_size}s").pack,
    )


def evaluation_records(
    trace_id: bytes,
    parent: bytes,
    observed_ns: int,
    event_name: str,
    scored: Iterable[tuple[ScoreParts, int, int]],
) -> tuple[bytes, bytes]:
    """A run's evaluation spans and their `event_name` log records, each framed as an entry of its
    scope's records, the spans joined and the records joined: one span and one record per
    (parts, start, end) of `scored`, in the trace `trace_id` (16 bytes), children of the span
    `parent` (8 bytes), each span with a new random id (64 random bits, never 0, as the SDK's
    `RandomIdGenerator`), each record at its span's end, observed at `observed_ns`."""
    trace_field = trace_id + b"\x12\x08"  # the trace id, then the span id's tag and length
    parent_field = b"\x22\x08" + parent
    context = log_context(trace_id, parent, observed_ns, event_name)
    spans: list[bytes] = []
    logs: list[bytes] = []
    for parts, start_ns, end_ns in scored:
        # Each span and event written whole by one struct of its parts. The span's id is 64
        # random bits: written little-endian, as random as the SDK's big-endian ones.
        spans.append(
            parts.pack_span(
                parts.span_head,
                trace_field,
                _getrandbits(64) or _nonzero_id(),
                parent_field,
                parts.span_middle,
                start_ns,
                0x41,
                end_ns,
                parts.span_tail,
            )
        )
        logs.append(parts.pack_log(parts.log_head, end_ns, parts.log_middle, context))
    return b"".join(spans), b"".join(logs)


def _nonzero_id() -> int:
    span_id = 0
    while span_id == 0:
        span_id = _getrandbits(64)
    return span_id


def span_links(remote_spans: Sequence[tuple[int, int]]) -> bytes:
    """A span's `links` (field 13), one per (trace id, span id) of a remote span, with the flags
    the SDK's encoder gives a link to a remote span context."""
    flags = _pack_fixed32(_SPAN_FLAGS_HAS_IS_REMOTE | _SPAN_FLAGS_IS_REMOTE)
    return b"".join(
        length_delimited(
            13,
            b"\x0a\x10"
            + trace_id.to_bytes(16, "big")
            + b"\x12\x08"
            + span_id.to_bytes(8, "big")
            + tag(6, _FIXED32)
            + flags,
        )
        for trace_id, span_id in remote_spans
    )


def log_context(trace_id: bytes, span_id: bytes, observed_ns: int, event_name: str) -> bytes:
    """A log record's fields after its attributes and flags: its span context, observed time
    and event name (the same for every event of a run)."""
    return _pack_context(b"\x4a\x10", trace_id, b"\x52\x08", span_id, 0x59, observed_ns) + _event_name_field(
        event_name
    )


_pack_context = struct.Struct("<2s16s2s8sBQ").pack


@lru_cache(maxsize=16)
def _event_name_field(event_name: str) -> bytes:
    return length_delimited(12, event_name.encode())


def log_context_size(event_name: str) -> int:
    """The size of what `log_context` writes for `event_name`."""
    return 2 + 16 + 2 + 8 + 1 + 8 + len(_event_name_field(event_name))


def resource_message(attributes: Mapping[str, Any], dropped: int = 0) -> bytes:
    """A `Resource` message."""
    body = attributes_field(1, attributes)
    return body + (b"\x10" + varint(dropped) if dropped else b"")


def scope_message(name: str, version: str | None) -> bytes:
    """An `InstrumentationScope` message."""
    return length_delimited(1, name.encode()) + (length_delimited(2, version.encode()) if version else b"")


def export_request(
    resource: bytes, resource_schema_url: str, scope: bytes, records: Sequence[bytes]
) -> bytes:
    """An `ExportTraceServiceRequest` or `ExportLogsServiceRequest` with one resource and one scope
    (the two share their layout: resource_*, then scope_*, then the spans or log records, all
    field 2 of their parent; schema URLs field 3). `records`: spans or log records as framed by
    `evaluation_records`, any number in each. The records, most of the request, are copied once:
    the fields around them are sized first, so that the request is one join."""
    scope_field = length_delimited(1, scope)
    scoped_size = len(scope_field) + sum(map(len, records))
    scoped_head = length_delimited(1, resource) + tag(2, _LEN) + varint(scoped_size)
    schema_field = length_delimited(3, resource_schema_url.encode()) if resource_schema_url else b""
    block_size = len(scoped_head) + scoped_size + len(schema_field)
    head = tag(1, _LEN) + varint(block_size) + scoped_head + scope_field
    return b"".join((head, *records, schema_field))
