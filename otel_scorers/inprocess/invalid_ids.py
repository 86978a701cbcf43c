"""Spans whose ids are not OTLP's, left out of scoring in process: counted and logged."""

from __future__ import annotations

from typing import Any

from otel_scorers.metrics import PipelineMetrics
from otel_scorers.throttled_log import throttled


def left_out(metrics: PipelineMetrics, context: Any, name: str) -> bool:
    """Whether a span is left out of its trace for ids that are not OTLP's (a trace id 0 or past
    128 bits, a span id 0 or past 64: an id generator's bug), counted and logged when it is.
    `context` is the SDK's `SpanContext`, a tuple whose sixth item is `is_valid`."""
    if context[5]:
        return False
    metrics.dropped_spans.add(1, {"otel_scorers.reason": "invalid_id"})
    throttled.warning(
        "invalid_id",
        "otel_scorers: span %r has an invalid trace_id or span_id (trace_id %#x, span_id %#x): left "
        "out of scoring, counted in otel_scorers.spans.dropped (reason invalid_id)",
        name,
        context[0],
        context[1],
    )
    return True
