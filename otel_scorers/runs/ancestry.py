"""The nearest marked ancestor of a span, the one walk up a trace's parent links.

Run assembly asks it which run a span belongs to and whether a model span sits inside another
model span; the sidecar, which spans lie under a run at all. Every span walked is remembered
with its answer, so the spans of a trace are walked about once in all, whatever their order.
Parent ids that loop (a span its own ancestor: bad input, or a sender's attack) end the walk at
the first span seen twice, so a cycle costs one step per span like any other chain.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Mapping
from typing import TypeVar

from otel_scorers.span_record import SpanRecord

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: Longest chain of parents walked: a trace nested deeper is not one an agent makes.
MAX_DEPTH = 10_000


def nearest_marked(
    start: K | None,
    parents: Mapping[K, K | None],
    marks: Mapping[K, V],
    cache: dict[K, V | None],
) -> V | None:
    """The mark of the first of `start` and its ancestors (through `parents`) that `marks` holds,
    None when none does or the chain leaves the trace. `cache` keeps the answer for every span
    walked; reuse it only with the same `parents` and `marks`."""
    path: list[K] = []
    found: V | None = None
    current = start
    while current is not None:
        if current in cache:
            found = cache[current]
            break
        if current in marks:
            found = marks[current]
            break
        path.append(current)
        # Seen on this walk until the answer is known: a cycle back to it finds no mark.
        cache[current] = None
        if len(path) > MAX_DEPTH:
            break
        current = parents.get(current)
    for visited in path:
        cache[visited] = found
    return found


def child_counts(spans: Iterable[SpanRecord], of: Collection[int] | None = None) -> dict[int, int]:
    """How many of `spans` sit directly inside each span: every parent's count, or those of the
    spans in `of` only (each counted, from 0), when only a few are asked about."""
    if of is not None:
        counts = dict.fromkeys(of, 0)
        for span in spans:
            if span.parent_span_id in counts:
                counts[span.parent_span_id] += 1
        return counts
    counts = {}
    for span in spans:
        if span.parent_span_id is not None:
            counts[span.parent_span_id] = counts.get(span.parent_span_id, 0) + 1
    return counts
