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


_STATUS_BY_SDK_CODE = {0: "unset", 1: "ok", 2: "error"}
_KIND_NAMES = ("unspecified", "internal", "server", "client", "producer", "consumer")

#: Instrumentation scope of everything this project emits; such spans are never scored.
OWN_SCOPE = "otel_scorers"


@dataclass(frozen=True, slots=True)
class SpanEvent:
    name: str
    time_ns: int
    attributes: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """A finished (or, for `end_ns is None`, still open) span.

    Ids are integers as in the SDK; attribute values are plain Python values (str, bool, int,
    float, lists of those, dicts for OTLP key-value lists).
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
    context = span.get_span_context()
    parent = span.parent
    status = span.status
    scope = span.instrumentation_scope
    resource = span.resource
    return SpanRecord(
        trace_id=context.trace_id if context else 0,
        span_id=context.span_id if context else 0,
        parent_span_id=parent.span_id if parent else None,
        name=span.name,
        kind=_KIND_NAMES[span.kind.value + 1] if span.kind is not None else "internal",
        start_ns=span.start_time or 0,
        end_ns=span.end_time,
        status=_STATUS_BY_SDK_CODE.get(status.status_code.value, "unset"),  # type: ignore[arg-type]
        status_message=status.description,
        attributes=_attributes(span),
        events=tuple(
            SpanEvent(event.name, event.timestamp or 0, event.attributes or _EMPTY) for event in span.events
        ),
        resource=resource.attributes if resource is not None else _EMPTY,
        scope=scope.name if scope is not None else "",
    )
