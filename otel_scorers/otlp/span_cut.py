"""An encoded OTLP trace request with some of its spans left out, cut from its bytes.

Inline mode forwards what it received less the run spans it holds back and the spans it rejects.
Deleting those from the parsed request and serialising it again cost about what parsing it did
(over a millisecond for the bench's 500-span, 290 kB requests, on nearly half of them); walking the
wire format to the spans left out and joining the bytes around them costs a fraction of that, and
everything else goes on byte for byte as it came (unknown fields, field order).

Field numbers: `ExportTraceServiceRequest.resource_spans` 1, `ResourceSpans.scope_spans` 2,
`ScopeSpans.spans` 2 (`opentelemetry/proto/{collector/trace,trace}/v1/*.proto`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_scorers.otlp.encode import varint
from otel_scorers.otlp.salvage import read_varint

#: Where a span sits in a request: its resource_spans, scope_spans and span index.
Position = tuple[int, int, int]

_LEN = 2
_RESOURCE_SPANS = 1
#: `scope_spans` in a `ResourceSpans` and `spans` in a `ScopeSpans` are both field 2.
_INNER = 2


class CutError(ValueError):
    """The bytes hold something the cut does not step over (a group, a truncation) or not the
    spans named: the parsed request is to be encoded again instead."""


def without_spans(body: bytes, positions: Collection[Position]) -> bytes:
    """`body`, an encoded `ExportTraceServiceRequest`, without the spans at `positions` (numbered
    as the parsed request numbers them: the n-th occurrence of each repeated field). Raises
    `ValueError` (`CutError`, most often) when the bytes cannot be cut as they are."""
    if not positions:
        return body
    targets: dict[int, Any] = {}
    for resource, scope, span in positions:
        targets.setdefault(resource, {}).setdefault(scope, {})[span] = None
    try:
        return _cut(body, memoryview(body), 0, len(body), _RESOURCE_SPANS, targets, 2)
    except IndexError:
        raise CutError("a field runs past the request") from None


def _cut(
    body: bytes, view: memoryview, start: int, end: int, field: int, targets: dict[int, Any], depth: int
) -> bytes:
    """The message between `start` and `end` without the occurrences of `field` named in
    `targets` (depth 0), or with them rewritten one level down (their own targets)."""
    pieces: list[bytes | memoryview] = []  # slices of the body, joined once: no copy before
    kept = start
    found = 0
    for index, field_start, content_start, content_end in _occurrences(body, start, end, field, targets):
        inner = targets[index]
        pieces.append(view[kept:field_start])
        if depth:  # a resource_spans or scope_spans, rewritten: its length changes
            content = _cut(body, view, content_start, content_end, _INNER, inner, depth - 1)
            pieces += (bytes((field << 3 | _LEN,)), varint(len(content)), content)
        kept = content_end
        found += 1
    if found != len(targets):
        raise CutError(f"the request has fewer occurrences of field {field} than named")
    pieces.append(view[kept:end])
    return b"".join(pieces)


def _occurrences(
    body: bytes, start: int, end: int, field: int, targets: dict[int, Any]
) -> list[tuple[int, int, int, int]]:
    """(index, field start, content start, content end) of the occurrences of the length-delimited
    `field` between `start` and `end` whose index is in `targets`; other fields are stepped over.
    A request's spans are walked past one by one: the common case (one-byte tag, length under
    16 kB) is read inline, which makes a span walked past cost a fraction of a microsecond."""
    found: list[tuple[int, int, int, int]] = []
    wanted = field << 3 | _LEN
    last = max(targets)
    index = 0
    at = start
    while at < end:
        field_start = at
        tag = body[at]
        size = body[at + 1]
        if tag == wanted and size < 0x80:
            content_start = at + 2
        elif tag == wanted and body[at + 2] < 0x80:
            size = (size & 0x7F) | body[at + 2] << 7
            content_start = at + 3
        else:
            tag, at = read_varint(body, at)
            if tag != wanted:
                at = _skip(body, at, tag)
                continue
            size, content_start = read_varint(body, at)
        at = content_start + size
        if index in targets:
            found.append((index, field_start, content_start, at))
            if index == last:
                break
        index += 1
    if at > end:
        raise CutError("a field runs past its message")
    return found


def _skip(body: bytes, at: int, tag: int) -> int:
    """Where the field whose `tag` was read, up to `at`, ends."""
    wire = tag & 7
    if wire == _LEN:
        size, at = read_varint(body, at)
        return at + size
    if wire == 0:
        return read_varint(body, at)[1]
    if wire in (1, 5):
        return at + (8 if wire == 1 else 4)
    raise CutError(f"wire type {wire} (a group) is not stepped over")
