"""Model spans no run holds that record, from a lower layer, a model call a run holds.

A framework that records its spans through a trace processor of its own, not as the current
span, leaves the client library's instrumentation no context to nest its span in: the client's
span of a model call the framework's model span records sits beside the run, under whatever span
was current (the trace's root), and no run holds it. Its time says which call it is: it lies
within that model span, as a lower layer's span of the same call lies inside it. Such a span is
that call seen by a lower layer (`RunParts.model_layers`): it completes what the outer span does
not hold (the answer, the model, the token counts), and is no call of its own. A span that lies
within the model spans of more than one run, or of none, stays where it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from otel_scorers.conventions import Convention
from otel_scorers.runs.run_parts import RunParts
from otel_scorers.span_record import SpanRecord


def give_displaced_layers(runs: Iterable[RunParts], unheld: Sequence[tuple[Convention, SpanRecord]]) -> None:
    """Each of the `unheld` model spans (of one trace; no run holds them) that lies within the
    model spans of exactly one run, to that run's innermost such span as a lower layer of it."""
    if not unheld:
        return
    outer = [(parts, span) for parts in runs for _, span in parts.models if span.end_ns]
    if not outer:
        return
    for convention, span in unheld:
        end = span.end_ns or span.start_ns
        holding = [
            (parts, model)
            for parts, model in outer
            if model.span_id != span.span_id
            and model.start_ns <= span.start_ns
            and end <= (model.end_ns or 0)
        ]
        if not holding or any(parts is not holding[0][0] for parts, _ in holding):
            continue
        parts, model = max(holding, key=lambda pair: pair[1].start_ns)
        parts.model_layers.setdefault(model.span_id, []).append((convention, span))
