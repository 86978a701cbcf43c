"""An OTLP trace request written from its spans' own serialized bytes.

The scoring process is handed each batch of ready traces as one `ExportTraceServiceRequest`.
Copying each protobuf span into a request made for it (`CopyFrom`) and serializing the request
copies every span twice; here each span is serialized once, where it stands, and the request's
few fields around the spans (a `ResourceSpans` and a `ScopeSpans` for each origin, in the order
the origins first come) are written around them, sized first, so that the request is the pieces
joined once. It parses to the same request as the copied one (a test holds them side by side).

Field numbers: `opentelemetry/proto/{collector/trace,trace}/v1/*.proto`.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain, repeat

from otel_scorers.otlp.encode import varint
from otel_scorers.sidecar.otlp_spans import Origin, OtlpSpan

# Tags of the length-delimited fields written: each a field number and wire type 2, one byte.
_RESOURCE_SPANS = b"\x0a"  # ExportTraceServiceRequest.resource_spans = 1
_RESOURCE = b"\x0a"  # ResourceSpans.resource = 1
_SCOPE_SPANS = b"\x12"  # ResourceSpans.scope_spans = 2
_SCOPE = b"\x0a"  # ScopeSpans.scope = 1
_SPAN = b"\x12"  # ScopeSpans.spans = 2
_SCHEMA_URL = b"\x1a"  # ScopeSpans.schema_url = 3


def request_bytes(traces: Iterable[Iterable[OtlpSpan]]) -> tuple[bytes, list[int]]:
    """One request carrying the spans of the traces, each under its own resource and scope (one
    `ResourceSpans` per origin, in the order the origins first come, each origin's spans in their
    order), and, for each span in the request's order, the place of its trace among `traces`."""
    by_origin: dict[int, tuple[Origin, list[bytes], list[int]]] = {}
    last: Origin | None = None
    serialized: list[bytes] = []
    in_origin: list[int] = []
    for place, spans in enumerate(traces):
        for item in spans:
            origin = item.origin
            if origin is not last:  # a trace's spans come in rows of the same origin
                found = by_origin.get(id(origin))
                if found is None:
                    found = by_origin[id(origin)] = (origin, [], [])
                last, serialized, in_origin = origin, found[1], found[2]
            serialized.append(item.span.SerializeToString())
            in_origin.append(place)
    places = [place for _, _, in_origin in by_origin.values() for place in in_origin]
    pieces: list[bytes] = []
    for origin, serialized, _ in by_origin.values():
        resource = origin.resource.SerializeToString()
        scope = origin.scope.SerializeToString()
        head = [_SCOPE, varint(len(scope)), scope]
        sizes = map(_LENGTHS.__getitem__, map(len, serialized))
        # Each span's tag, length and bytes, interleaved in C: no Python code a span.
        head += chain.from_iterable(zip(repeat(_SPAN), sizes, serialized))
        if origin.schema_url:
            url = origin.schema_url.encode()
            head += (_SCHEMA_URL, varint(len(url)), url)
        scope_spans = sum(map(len, head))
        scope_spans_length = varint(scope_spans)
        resource_field = (_RESOURCE, varint(len(resource)), resource)
        resource_spans = sum(map(len, resource_field)) + 1 + len(scope_spans_length) + scope_spans
        pieces += (_RESOURCE_SPANS, varint(resource_spans), *resource_field)
        pieces += (_SCOPE_SPANS, scope_spans_length, *head)
    return b"".join(pieces), places


class _Lengths(dict[int, bytes]):
    """Lengths as varints, each under 16 KiB remembered once written (at most 16,384)."""

    def __missing__(self, length: int) -> bytes:
        written = varint(length)
        if length < 0x4000:
            self[length] = written
        return written


_LENGTHS = _Lengths()
