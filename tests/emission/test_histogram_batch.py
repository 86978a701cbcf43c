"""`HistogramBatch` gives the histogram points and exemplars that recording each measurement in
its run's context gives: the reference is the SDK itself, fed the same measurements one by one."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.metrics import Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    ExponentialHistogramDataPoint,
    InMemoryMetricReader,
)
from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation, View
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from otel_scorers.emission.histogram_batch import HistogramBatch
from otel_scorers.metrics import DURATION_BUCKETS, SCORE_BUCKETS, PipelineMetrics


def measurements(count: int) -> list[tuple[str, float, dict[str, Any], Any]]:
    """Scores and durations of `count` runs of three scorers, each run in its own sampled trace."""
    generator = random.Random(7)
    found = []
    for _ in range(count):
        parent = SpanContext(generator.getrandbits(128), generator.getrandbits(64), False, TraceFlags(1))
        context = trace.set_span_in_context(NonRecordingSpan(parent))
        for scorer in ("no_tool_errors", "similarity", "says-sunny"):
            value = generator.choice((0.0, 1.0)) if scorer != "similarity" else round(generator.random(), 2)
            label = {1.0: "pass", 0.0: "fail"}.get(value) if scorer != "similarity" else None
            attributes = {"gen_ai.evaluation.name": scorer, "gen_ai.agent.name": "weather"}
            if label:
                attributes["gen_ai.evaluation.score.label"] = label
            found.append(("score", value, attributes, context))
            duration = generator.choice((0.000_004, 0.000_03, 0.2))
            found.append(("duration", duration, {"gen_ai.evaluation.name": scorer}, context))
    return found


def buckets(point: Any) -> tuple[int, ...]:
    if isinstance(point, ExponentialHistogramDataPoint):
        return (point.scale, point.zero_count, point.positive.offset, *point.positive.bucket_counts)
    return tuple(point.bucket_counts)


def exemplars(point: Any) -> tuple[Any, ...]:
    # An exponential histogram's reservoir samples at random: which exemplars it keeps is chance.
    if isinstance(point, ExponentialHistogramDataPoint):
        return ()
    return tuple((e.trace_id, e.span_id, e.value) for e in point.exemplars)


def points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    data = reader.get_metrics_data()
    assert data is not None
    found: dict[str, list[Any]] = {}
    for resource_metrics in data.resource_metrics:
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                if metric.name not in ("gen_ai.evaluation.score", "otel_scorers.scorer.duration"):
                    continue
                found[metric.name] = sorted(
                    (
                        tuple(sorted(point.attributes.items())),
                        point.count,
                        round(point.sum, 9),
                        buckets(point),
                        point.min,
                        point.max,
                        exemplars(point),
                    )
                    for point in metric.data.data_points
                )
    return found


def delta_reader() -> InMemoryMetricReader:
    return InMemoryMetricReader(preferred_temporality={Histogram: AggregationTemporality.DELTA})


SETUPS: dict[str, Callable[[], tuple[list[InMemoryMetricReader], list[View]]]] = {
    "one reader": lambda: ([InMemoryMetricReader()], []),
    "cumulative and delta readers": lambda: ([InMemoryMetricReader(), delta_reader()], []),
    # A view keeping only some attributes: the SDK's aggregation is found by the attributes kept.
    "a view that drops attributes": lambda: (
        [InMemoryMetricReader()],
        [View(instrument_name="gen_ai.evaluation.score", attribute_keys={"gen_ai.evaluation.name"})],
    ),
    # Aggregations other than explicit buckets take the public path.
    "an exponential histogram view": lambda: (
        [InMemoryMetricReader()],
        [
            View(
                instrument_name="otel_scorers.scorer.duration",
                aggregation=ExponentialBucketHistogramAggregation(),
            )
        ],
    ),
}


@pytest.mark.parametrize("lazy", [False, True], ids=["context", "made-when-needed"])
@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_a_batch_records_the_points_and_exemplars_that_recording_each_in_its_context_does(
    setup: str, lazy: bool
) -> None:
    recorded = measurements(200)
    made = 0

    def later(context: Context) -> Callable[[], Context]:
        def make() -> Context:
            nonlocal made
            made += 1
            return context

        return make

    found: list[list[dict[str, list[Any]]]] = []
    for batched in (False, True):
        readers, views = SETUPS[setup]()
        metrics = PipelineMetrics(MeterProvider(metric_readers=readers, views=views))
        batch = HistogramBatch()
        for kind, value, attributes, context in recorded:
            histogram, boundaries = (
                (metrics.score, SCORE_BUCKETS)
                if kind == "score"
                else (metrics.scorer_duration, DURATION_BUCKETS)
            )
            if batched:
                batch.add(histogram, boundaries, value, attributes, later(context) if lazy else context)
                if len(batch) >= 60:  # batches that end anywhere in a run
                    batch.record()
            else:
                histogram.record(value, attributes, context=context)
        batch.record()
        found.append([points(reader) for reader in readers])
    expected, got = found
    for points_of_reader in expected:
        assert set(points_of_reader) == {"gen_ai.evaluation.score", "otel_scorers.scorer.duration"}
        assert any(exemplars for *_, exemplars in points_of_reader["gen_ai.evaluation.score"])
    assert got == expected
    if lazy:  # a context is made only for the measurements that decide an exemplar
        assert 0 < made < len(recorded) / 2


def test_values_the_sdk_refuses_are_left_to_it() -> None:
    """Negative and non-finite values are dropped by the SDK (with its warning), batched or not."""
    reader = InMemoryMetricReader()
    metrics = PipelineMetrics(MeterProvider(metric_readers=[reader]))
    batch = HistogramBatch()
    for value in (0.5, -1.0, float("nan"), float("inf"), 0.5, 1.0):
        batch.add(metrics.score, SCORE_BUCKETS, value, {"gen_ai.evaluation.name": "odd"}, Context())
    batch.record()
    [point] = [(count, total) for _, count, total, *_ in points(reader)["gen_ai.evaluation.score"]]
    assert point == (3, 2.0)


def test_a_collection_records_what_a_batch_holds_back() -> None:
    """A reader that collects mid-batch sees every measurement emitted before it."""
    reader = InMemoryMetricReader()
    metrics = PipelineMetrics(MeterProvider(metric_readers=[reader]))
    batch = HistogramBatch()
    metrics.before_collect(batch.record)
    for value in (0.0, 1.0, 1.0):
        batch.add(metrics.score, SCORE_BUCKETS, value, {"gen_ai.evaluation.name": "check"}, Context())
    [(_, count, total, *_)] = points(reader)["gen_ai.evaluation.score"]
    assert (count, total) == (3, 2.0)
    assert len(batch) == 0
