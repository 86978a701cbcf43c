"""The pipeline's own health metrics, next to the scores (names: DESIGN's emission contract)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation

from otel_scorers.span_record import OWN_SCOPE
from otel_scorers.version import __version__

#: Bucket boundaries for scores in 0..1 (a check's 0 and 1 land in the first and last bucket).
SCORE_BUCKETS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
DURATION_BUCKETS = (0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

OUTCOME = "otel_scorers.outcome"
REASON = "otel_scorers.reason"
EVALUATION_NAME = "gen_ai.evaluation.name"


class PipelineMetrics:
    """Counters and histograms for every stage; one instance per pipeline."""

    def __init__(self, meter_provider: MeterProvider | None = None) -> None:
        provider = meter_provider or metrics.get_meter_provider()
        meter = provider.get_meter(OWN_SCOPE, __version__)
        self.meter = meter
        self.score = meter.create_histogram(
            "gen_ai.evaluation.score",
            unit="1",
            description="Evaluation scores by scorer, label and agent.",
            explicit_bucket_boundaries_advisory=SCORE_BUCKETS,
        )
        self.results = meter.create_counter(
            "gen_ai.evaluation.results",
            unit="{result}",
            description="Evaluation results by scorer, label and agent.",
        )
        self.runs = meter.create_counter(
            "otel_scorers.runs",
            unit="{run}",
            description="Agent runs by outcome: assembled, dropped (with reason).",
        )
        self.evaluations = meter.create_counter(
            "otel_scorers.evaluations",
            unit="{evaluation}",
            description="Per scorer binding and run: filtered, sampled_out, rate_limited, scored, skipped, error.",
        )
        self.late_spans = meter.create_counter(
            "otel_scorers.late_spans",
            unit="{span}",
            description="Spans that arrived after their run was built.",
        )
        self.dropped_spans = meter.create_counter(
            "otel_scorers.spans.dropped", unit="{span}", description="Spans not buffered, by reason."
        )
        self.scorer_duration = meter.create_histogram(
            "otel_scorers.scorer.duration",
            unit="s",
            description="Time one scorer took on one run.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.scorer_errors = meter.create_counter(
            "otel_scorers.scorer.errors",
            unit="{error}",
            description="Scorer failures by scorer and error.type.",
        )
        self.judge_tokens = meter.create_counter(
            "otel_scorers.judge.tokens",
            unit="{token}",
            description="Tokens the LLM judges used, by scorer, model and gen_ai.token.type (input, output).",
        )
        self.judge_cost = meter.create_counter(
            "otel_scorers.judge.cost",
            unit="USD",
            description="What the LLM judges cost (litellm's cost table).",
        )
        self.judge_budget_skips = meter.create_counter(
            "otel_scorers.judge.budget_skips",
            unit="{evaluation}",
            description="Judge evaluations skipped because the hourly cost budget was spent.",
        )
        self.receiver_spans = meter.create_counter(
            "otel_scorers.receiver.spans",
            unit="{span}",
            description="Spans the sidecar's receivers got, by outcome (accepted, refused) and reason.",
        )

    def observe_queue(self, depth: Callable[[], int], capacity: int) -> None:
        def callback(_options: CallbackOptions) -> Iterable[Observation]:
            return [Observation(depth(), {"otel_scorers.queue.capacity": capacity})]

        self.meter.create_observable_gauge(
            "otel_scorers.queue.depth",
            callbacks=[callback],
            unit="{run}",
            description="Runs waiting to be scored.",
        )

    def run_outcome(self, outcome: str, reason: str | None = None, amount: int = 1) -> None:
        attributes: dict[str, Any] = {OUTCOME: outcome}
        if reason:
            attributes[REASON] = reason
        self.runs.add(amount, attributes)

    def evaluation_outcome(self, scorer: str, outcome: str) -> None:
        self.evaluations.add(1, {EVALUATION_NAME: scorer, OUTCOME: outcome})
