"""Runs whose marker was written after their span started, as the GenAI conventions allow
(`set_attribute` after `start_span`): seen in process from the first span starting inside them
that carries a marker's key (a model or tool call, a run; `may_start_run` says None or True),
by looking at that span's parent, whose attributes hold the marker by then. What the run did
before (a child span that already ended) is not seen; a trace opened so waits for its root in
this process, since a run around it may have been marked late too (docs/limits.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanContext, get_current_span

from otel_scorers.conventions import may_start_run
from otel_scorers.span_record import OWN_SCOPE


def marked_parent(parent_context: Any, trace_id: int) -> tuple[SpanContext, ReadableSpan] | None:
    """(its context, the span) of the open parent, in the trace `trace_id`, of a span starting
    under `parent_context` (the SDK's, else the current context), when it is a run by now; not
    the project's own."""
    parent = get_current_span(parent_context)
    if not isinstance(parent, ReadableSpan) or not parent.is_recording():
        return None
    scope, context = parent.instrumentation_scope, parent.get_span_context()
    if (
        context.trace_id != trace_id
        or (scope is not None and scope.name == OWN_SCOPE)
        or not may_start_run(parent.name, parent.attributes)
    ):
        return None
    return context, parent


def marked_parent_in(
    started: Mapping[int, ReadableSpan], open_runs: Set[int], span: ReadableSpan
) -> tuple[int, ReadableSpan] | None:
    """(span id, span) of the parent of `span`, open in a buffered trace (`started`) and not one
    of its `open_runs`, when it is a run by now."""
    parent_context: Any = span.parent
    if parent_context is None:
        return None
    parent_id: int = parent_context.span_id
    parent = started.get(parent_id)
    if parent is None or parent_id in open_runs or not may_start_run(parent.name, parent.attributes):
        return None
    return parent_id, parent
