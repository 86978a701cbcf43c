"""Spans of a described scope written in another reader's vocabulary.

A scope is usually its instrumentation's own, so its description is asked first for its spans
(`detect`). Some SDKs lend their tracer to a library that writes spans of its own (Laminar's
`getTracer()` handed to the Vercel AI SDK's `experimental_telemetry`): those spans come under the
lender's scope, with the lender's keys beside the library's. Such a span is the library's reader's
when it carries that reader's marker key and the scope's description gives it no role.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from otel_scorers.conventions.base import Convention, Markers
from otel_scorers.span_record import SpanRecord


def lent_out(
    convention: Convention,
    span: SpanRecord,
    first: Markers | None,
    readers: Iterable[tuple[Convention, Callable[[SpanRecord], bool]]],
) -> bool:
    """Whether `span`, claimed by `convention` for its scope, is one of `readers`' instead: it
    carries one of their marker keys (`first`, their markers together), one of them claims it and
    `convention` gives it no role. One set operation for the scope's other spans."""
    if first is None or span.attributes.keys().isdisjoint(first.keys):
        return False
    return convention.role(span) is None and any(carries(span) for _, carries in readers)
