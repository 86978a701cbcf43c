"""The judge's own work as metrics: each provider call's duration by model and outcome, the calls
waiting for a slot and those out, and whether a judge's connection breaker is open. Read from
each `Judge`'s `activity` and `breaker`: the judge itself knows no metrics SDK."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from opentelemetry.metrics import CallbackOptions, Observation

from otel_scorers.gen_ai_names import GEN_AI_REQUEST_MODEL
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.scorers.judge import Judge

MODEL = GEN_AI_REQUEST_MODEL
OUTCOME = "otel_scorers.outcome"
#: Seconds: a local model's quick reply to a slow hosted model's long one.
CALL_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def judges_of(scorers: Iterable[Any]) -> list[Judge]:
    """The distinct judges the given scorers call (a judged scorer's `judge`)."""
    found: dict[int, Judge] = {}
    for scorer in scorers:
        judge = getattr(scorer, "judge", None)
        if isinstance(judge, Judge):
            found.setdefault(id(judge), judge)
    return list(found.values())


def observe_judges(metrics: PipelineMetrics, judges: Sequence[Judge]) -> None:
    """`otel_scorers.judge.call.duration` (histogram), `otel_scorers.judge.calls.in_flight`,
    `otel_scorers.judge.calls.queued` and `otel_scorers.judge.breaker.open` (gauges), for `judges`."""
    if not judges:
        return
    meter = metrics.meter
    duration = meter.create_histogram(
        "otel_scorers.judge.call.duration",
        unit="s",
        description="One call to the judge's provider, by model and outcome (ok, or the error kind).",
        explicit_bucket_boundaries_advisory=CALL_BUCKETS,
    )

    def record(model: str, outcome: str, seconds: float) -> None:
        duration.record(seconds, {MODEL: model, OUTCOME: outcome})

    for judge in judges:
        judge.activity.listen(record)
    metrics.observe_count(
        "otel_scorers.judge.calls.in_flight",
        "{call}",
        "Judge calls holding one of the judge's concurrency slots.",
        lambda: sum(judge.activity.in_flight for judge in judges),
    )
    metrics.observe_count(
        "otel_scorers.judge.calls.queued",
        "{call}",
        "Judge calls waiting for one of the judge's concurrency slots.",
        lambda: sum(judge.activity.queued for judge in judges),
    )

    def breakers(_options: CallbackOptions) -> Iterable[Observation]:
        return [Observation(1 if judge.breaker.open else 0, {MODEL: judge.config.model}) for judge in judges]

    meter.create_observable_gauge(
        "otel_scorers.judge.breaker.open",
        callbacks=[breakers],
        unit="1",
        description="1 while a judge's connection breaker is open (its calls fail at once), else 0.",
    )
