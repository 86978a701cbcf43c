"""A run's model spans, one per call: some calls are recorded by more than one span."""

from __future__ import annotations

from collections.abc import Sequence

from otel_scorers.conventions import Convention
from otel_scorers.span_record import SpanRecord


def one_per_call(
    spans: Sequence[tuple[Convention, SpanRecord]], handed: Sequence[int]
) -> list[tuple[Convention, SpanRecord]]:
    """A run's model spans, one per call: spans that overlap in time record the same call (a
    client's own spans beside its instrumentation's, anthropic's), so one of them counts, the one
    that records more. A run's model calls follow one another, but for an agent handed the run
    inside a call (`RunParts.handed_within`), whose calls are its own."""
    if len(spans) < 2:
        return list(spans)
    kept: list[tuple[Convention, SpanRecord]] = []
    # Sorted by start, unless they are already in that order, as a run's spans mostly are (the
    # sort calls its key for each span).
    ordered = spans
    previous = spans[0][1].start_ns
    for _, span in spans:
        if span.start_ns < previous:
            ordered = sorted(spans, key=lambda pair: pair[1].start_ns)
            break
        previous = span.start_ns
    for pair in ordered:
        start, last = pair[1].start_ns, kept[-1][1] if kept else None
        if (
            last
            and start < (last.end_ns or last.start_ns)
            and not any(last.start_ns < at <= start for at in handed)
        ):
            if len(pair[1].attributes) > len(last.attributes):
                kept[-1] = pair
            continue
        kept.append(pair)
    return kept
