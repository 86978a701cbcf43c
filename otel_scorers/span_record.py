"""`SpanRecord`: one neutral view of a span, whatever it came from (SDK span or OTLP)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

SpanStatus = Literal["ok", "error", "unset"]
_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _empty() -> Mapping[str, Any]:
    return _EMPTY


#: Span kinds and status codes by their number, in OTLP (the SDK's `StatusCode` numbers the same;
#: its `SpanKind` starts at internal, one less).
KIND_NAMES = ("unspecified", "internal", "server", "client", "producer", "consumer")
STATUS_NAMES = ("unset", "ok", "error")

#: Instrumentation scope of everything this project emits; such spans are never scored.
OWN_SCOPE = "otel_scorers"


@dataclass(slots=True)
class SpanEvent:
    name: str
    time_ns: int
    attributes: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(slots=True)
class SpanRecord:
    """A finished (or, for `end_ns is None`, still open) span.

    Ids are integers as in the SDK; attribute values are plain Python values (str, bool, int,
    float, lists of those, dicts for OTLP key-value lists).

    Slotted, not frozen: one is made for every span taken in, and a frozen dataclass sets each
    field through `object.__setattr__`, about twice the cost of making one. Nothing changes a
    record once made, nor hashes one.
    """

    trace_id: int
    span_id: int
    parent_span_id: int | None
    name: str
    kind: str = "internal"
    start_ns: int = 0
    end_ns: int | None = None
    status: SpanStatus = "unset"
    status_message: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=_empty)
    events: tuple[SpanEvent, ...] = ()
    resource: Mapping[str, Any] = field(default_factory=_empty)
    scope: str = ""

    @property
    def ended(self) -> bool:
        return self.end_ns is not None


def with_attributes(span: SpanRecord, attributes: Mapping[str, Any]) -> SpanRecord:
    """`span` with these attributes, every other field kept: `dataclasses.replace` without its
    walk over the fields, for spans read again with keys added (a fork's, `conventions/forked.py`)."""
    return SpanRecord(
        span.trace_id,
        span.span_id,
        span.parent_span_id,
        span.name,
        span.kind,
        span.start_ns,
        span.end_ns,
        span.status,
        span.status_message,
        attributes,
        span.events,
        span.resource,
        span.scope,
    )


def _attributes(span: ReadableSpan) -> Mapping[str, Any]:
    """A read-only view of an ended span's attributes over the SDK's plain dict: the SDK's own
    view goes through a lock-guarded mapping whose missed lookups raise and catch a KeyError,
    and conventions make dozens of lookups per span. A span still open (a tool that never
    finished) may change under us: it gets the SDK's view, which copies under the lock."""
    if span.end_time is not None:
        raw = getattr(getattr(span, "_attributes", None), "_dict", None)
        if type(raw) is dict:
            return MappingProxyType(raw)
    return span.attributes or _EMPTY


def from_readable_span(span: ReadableSpan) -> SpanRecord:
    """Wrap an SDK span without copying its attributes (they are immutable once it ended)."""
    if type(span) in _SDK_SPAN_TYPES:
        # The SDK's own spans, read past their properties: the engine does this for every span of
        # every run, and each property is a call (`events` copies the list even when empty).
        context = span._context
        parent = span._parent
        status = span._status
        scope = span._instrumentation_scope
        resource = span._resource
        events = span._events
        kind = span._kind
        name = span._name
        start_ns = span._start_time
        end_ns = span._end_time
    else:
        context = span.get_span_context()
        parent = span.parent
        status = span.status
        scope = span.instrumentation_scope
        resource = span.resource
        events = span.events
        kind = span.kind
        name = span.name
        start_ns = span.start_time
        end_ns = span.end_time
    code = status.status_code
    return SpanRecord(
        context.trace_id if context else 0,
        context.span_id if context else 0,
        parent.span_id if parent else None,
        name,
        # An enum member hashes in Python, so a dict lookup costs a call: the kind and status
        # most spans have are answered by identity first.
        "internal" if kind is _INTERNAL or kind is None else _KIND_BY_SDK_KIND.get(kind, "internal"),
        start_ns or 0,
        end_ns,
        "unset" if code is _UNSET else _STATUS_BY_SDK_STATUS.get(code, "unset"),  # type: ignore[arg-type]
        status.description,
        _attributes(span),
        tuple(SpanEvent(event.name, event.timestamp or 0, event.attributes or _EMPTY) for event in events)
        if events
        else (),
        resource.attributes if resource is not None else _EMPTY,
        scope.name if scope is not None else "",
    )


def _sdk_span_types() -> tuple[type, ...]:
    from opentelemetry.sdk.trace import ReadableSpan, Span

    return (ReadableSpan, Span)


def _sdk_codes() -> tuple[dict[Any, str], dict[Any, str], Any, Any]:
    from opentelemetry.trace import SpanKind, StatusCode

    kinds = {kind: KIND_NAMES[kind.value + 1] for kind in SpanKind}
    statuses = {
        code: STATUS_NAMES[code.value] if 0 <= code.value < len(STATUS_NAMES) else "unset"
        for code in StatusCode
    }
    return kinds, statuses, SpanKind.INTERNAL, StatusCode.UNSET


_SDK_SPAN_TYPES = frozenset(_sdk_span_types())
_KIND_BY_SDK_KIND, _STATUS_BY_SDK_STATUS, _INTERNAL, _UNSET = _sdk_codes()
