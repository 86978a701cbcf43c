"""Histogram measurements of a batch of runs recorded together, each in its run's context only
where that decides an exemplar."""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from opentelemetry.context import Context
from opentelemetry.metrics import Histogram

from otel_scorers.fork_safety import renew_in_child

#: Recording without a span in the context: no exemplar offered.
_NO_SPAN = Context()
#: Measurements recorded between two calls of the safe point `record` is given (about 10 µs each).
_RECORDS_PER_SAFE_POINT = 8


#: (histogram, value, attributes, run context, attribute-set group, bucket): `HistogramBatch.entry`.
#: The context a measurement is recorded in, or what makes it: made only for the measurements
#: that decide an exemplar, a few per batch.
MeasurementContext = Context | Callable[[], Context]


HistogramEntry = tuple[Histogram, float, Mapping[str, Any], MeasurementContext, tuple[Any, ...], int]


class HistogramBatch:
    """Histogram measurements of a batch of runs, recorded together when the batch ends (or the
    metrics are collected), each in its run's context only where that decides an exemplar.

    Within a batch, for an explicit-bucket histogram, only the last measurement per histogram,
    attribute set and bucket can end up as an exemplar (the SDK's reservoir keeps the last
    sampled one of each bucket until the next collection): those are recorded in their run's
    context, the others in an empty one (no span: no exemplar offered, and no run context made
    for them). Every measurement goes through the public `Histogram.record`; the SDK's
    aggregations are never touched from here. The points and exemplars exported are those that
    recording every measurement in its run's context gives."""

    def __init__(self) -> None:
        self._pending: list[HistogramEntry] = []
        self._lock = threading.Lock()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        self._lock = threading.Lock()

    @staticmethod
    def group(histogram: Histogram, attributes: Mapping[str, Any]) -> tuple[Any, ...]:
        """What tells a histogram's attribute sets apart (`entry`'s `group`: worth keeping)."""
        return (id(histogram), *attributes.items())

    @staticmethod
    def entry(
        histogram: Histogram,
        boundaries: Sequence[float],
        value: float,
        attributes: Mapping[str, Any],
        context: MeasurementContext,
        group: tuple[Any, ...] | None = None,
    ) -> HistogramEntry:
        # The bucket as the SDK picks it: the first boundary the value does not exceed.
        bucket = bisect_left(boundaries, value)
        return (
            histogram,
            value,
            attributes,
            context,
            group or HistogramBatch.group(histogram, attributes),
            bucket,
        )

    def add(
        self,
        histogram: Histogram,
        boundaries: Sequence[float],
        value: float,
        attributes: Mapping[str, Any],
        context: MeasurementContext,
    ) -> None:
        self.extend((self.entry(histogram, boundaries, value, attributes, context),))

    def extend(self, entries: Iterable[HistogramEntry]) -> None:
        with self._lock:
            self._pending.extend(entries)

    def __len__(self) -> int:
        return len(self._pending)

    def record(self, safe_point: Callable[[], None] | None = None) -> None:
        """Record what is held; `safe_point`, when given, is called after every few measurements
        (a metric reader's collection, the only other caller, waits for the lock meanwhile)."""
        with self._lock:  # the engine's thread and a metric reader's collection may both call this
            pending, self._pending = self._pending, []
            if not pending:
                return
            last = {(entry[4], entry[5]): index for index, entry in enumerate(pending)}
            for index, (histogram, value, attributes, context, group_key, bucket) in enumerate(pending):
                if safe_point is not None and index % _RECORDS_PER_SAFE_POINT == _RECORDS_PER_SAFE_POINT - 1:
                    safe_point()
                if last[group_key, bucket] == index:
                    context = context() if callable(context) else context
                else:
                    context = _NO_SPAN
                histogram.record(value, attributes, context=context)
