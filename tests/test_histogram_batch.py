"""`HistogramBatch` gives the histogram points and exemplars that recording each measurement in
its run's context gives: the reference is the SDK itself, fed the same measurements one by one."""

from __future__ import annotations

import random
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from otel_scorers.metrics import DURATION_BUCKETS, SCORE_BUCKETS, HistogramBatch, PipelineMetrics


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
                        tuple(point.bucket_counts),
                        point.min,
                        point.max,
                        tuple((e.trace_id, e.span_id, e.value) for e in point.exemplars),
                    )
                    for point in metric.data.data_points
                )
    return found


def test_a_batch_records_the_points_and_exemplars_that_recording_each_in_its_context_does() -> None:
    recorded = measurements(200)
    readers = []
    for batched in (False, True):
        reader = InMemoryMetricReader()
        metrics = PipelineMetrics(MeterProvider(metric_readers=[reader]))
        batch = HistogramBatch()
        for kind, value, attributes, context in recorded:
            histogram, boundaries = (
                (metrics.score, SCORE_BUCKETS)
                if kind == "score"
                else (metrics.scorer_duration, DURATION_BUCKETS)
            )
            if batched:
                batch.add(histogram, boundaries, value, attributes, context)
                if len(batch) >= 60:  # batches that end anywhere in a run
                    batch.record()
            else:
                histogram.record(value, attributes, context=context)
        batch.record()
        readers.append(reader)
    expected, got = points(readers[0]), points(readers[1])
    assert set(expected) == {"gen_ai.evaluation.score", "otel_scorers.scorer.duration"}
    assert any(exemplars for *_, exemplars in expected["gen_ai.evaluation.score"])
    assert got == expected
