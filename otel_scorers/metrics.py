"""The pipeline's own health metrics, next to the scores (names: DESIGN's emission contract)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Meter, MeterProvider, Observation

from otel_scorers.fork_safety import renew_in_child
from otel_scorers.gen_ai_names import (
    GEN_AI_AGENT_NAME,
    GEN_AI_EVALUATION_NAME,
    GEN_AI_EVALUATION_RESULTS,
    GEN_AI_EVALUATION_SCORE,
    GEN_AI_EVALUATION_SCORE_LABEL,
)
from otel_scorers.span_record import OWN_SCOPE
from otel_scorers.version import __version__

#: Bucket boundaries for scores in 0..1 (a check's 0 and 1 land in the first and last bucket).
SCORE_BUCKETS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)


DURATION_BUCKETS = (0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


#: A quick check's duration goes into `otel_scorers.scorer.duration` for one of its evaluations in
#: this many (the first, then every 16th): recording one costs the SDK's `Histogram.record` about
#: 6 µs, more than a check takes. A latency histogram's quantiles stay those of all evaluations;
#: its count is not theirs (`otel_scorers.evaluations` counts every one).
QUICK_DURATION_EVERY = 16


OUTCOME = "otel_scorers.outcome"


REASON = "otel_scorers.reason"


EVALUATION_NAME = GEN_AI_EVALUATION_NAME


SCORE_LABEL = GEN_AI_EVALUATION_SCORE_LABEL


AGENT_NAME = GEN_AI_AGENT_NAME


#: The instrumentation scope of the root span of a trace in which no run was found.
SCOPE = "otel_scorers.scope"


#: What made a result (`Score.evaluator_version`): one value per binding, so a bounded label.
EVALUATOR_VERSION = "otel_scorers.evaluator.version"


#: The attributes of a result's counts and estimates, in the order of their keys' values.
RESULT_KEYS = (EVALUATION_NAME, SCORE_LABEL, AGENT_NAME, EVALUATOR_VERSION)


#: Most attribute sets a `Tally` keeps apart (the SDK's own default cardinality limit); more are
#: counted together under `otel.metric.overflow=true`, as the SDK does.
TALLY_LIMIT = 2000


_OVERFLOW: tuple[Any, ...] = ("otel.metric.overflow",)


class Tally:
    """A monotonic counter kept in a dict and reported through an `ObservableCounter` when the
    metrics are collected. Adding costs a dict update under a lock, where an SDK counter costs
    attribute hashing, one aggregation per metric reader and exemplar sampling: for the counters
    updated several times per scored run. `add(amount, *values)` takes the values of `keys` in
    order; None leaves the attribute out. With `plus`, what is reported is this tally's counts
    added to that one's (a tally that counts only what differs from another)."""

    def __init__(
        self,
        meter: Meter,
        name: str,
        unit: str,
        description: str,
        keys: tuple[str, ...],
        before_observe: Callable[[], None] | None = None,
        plus: Tally | None = None,
    ) -> None:
        self._keys = keys
        self._before_observe = before_observe
        self._plus = plus
        self._counts: dict[tuple[Any, ...], float] = {}
        self._lock = threading.Lock()
        renew_in_child(self)
        meter.create_observable_counter(name, callbacks=[self._observe], unit=unit, description=description)

    def renew_after_fork(self) -> None:
        self._lock = threading.Lock()

    def add(self, amount: float, *values: Any) -> None:
        counts = self._counts
        with self._lock:
            if values not in counts and len(counts) >= TALLY_LIMIT:
                values = _OVERFLOW
            counts[values] = counts.get(values, 0) + amount

    def add_counts(self, amounts: Mapping[tuple[Any, ...], float]) -> None:
        """`add(amount, *values)` for each item, under one lock (a run's several scores)."""
        counts = self._counts
        with self._lock:
            for values, amount in amounts.items():
                if values not in counts and len(counts) >= TALLY_LIMIT:
                    values = _OVERFLOW
                counts[values] = counts.get(values, 0) + amount

    def counts(self) -> dict[tuple[Any, ...], float]:
        with self._lock:
            return dict(self._counts)

    def _observe(self, _options: CallbackOptions) -> Iterable[Observation]:
        if self._before_observe is not None:
            self._before_observe()
        counts = self.counts()
        if self._plus is not None:
            for values, count in self._plus.counts().items():
                counts[values] = counts.get(values, 0) + count
        return [Observation(count, self._attributes(values)) for values, count in counts.items()]

    def _attributes(self, values: tuple[Any, ...]) -> dict[str, Any]:
        if values is _OVERFLOW:
            return {"otel.metric.overflow": True}
        return {key: value for key, value in zip(self._keys, values, strict=True) if value is not None}


#: (scorer, label, agent, evaluator version) of a scored result, its value, and its inclusion probability (below 1).
WeightedResult = tuple[tuple[Any, ...], float, float]


class Estimates:
    """What a dashboard needs to estimate each scorer's pass rate and mean score over all runs
    when only some were scored, with some more likely to be than others: Horvitz-Thompson sums,
    each result weighted by the inverse of its inclusion probability `p` (`w = 1/p`), by scorer,
    label and agent.

    - `otel_scorers.estimate.weight`: sum of w (the estimated number of runs with that result);
    - `otel_scorers.estimate.weighted_score`: sum of w * score;
    - `otel_scorers.estimate.variance_weight`, `.variance_score`, `.variance_score_squared`: sums
      of w(w-1), w(w-1) * score and w(w-1) * score^2, from which the estimate's variance follows
      (zero where every run was scored: those sums are only kept for results with p < 1).

    Pass rate: R = weight{pass} / weight{pass|fail}, variance (vw{pass} * (1 - 2R) +
    R^2 * vw{pass|fail}) / weight{pass|fail}^2. Mean score: M = weighted_score / weight,
    variance (vs2 - 2M * vs + M^2 * vw) / weight^2. README: "Honest estimates"."""

    def __init__(self, meter: Meter, results: Tally) -> None:
        """`results`: `gen_ai.evaluation.results`, the weight of every result as if scored with
        probability 1; `weight` keeps only what the results scored with less add to it."""
        keys = RESULT_KEYS

        def tally(name: str, unit: str, description: str, plus: Tally | None = None) -> Tally:
            return Tally(meter, f"otel_scorers.estimate.{name}", unit, description, keys, plus=plus)

        self.weight = tally("weight", "{result}", "Results weighted by 1/inclusion probability.", results)
        self.weighted_score = tally(
            "weighted_score", "{score}", "Scores weighted by 1/inclusion probability."
        )
        self.variance_weight = tally(
            "variance_weight", "{result}", "Sum of w(w-1), w = 1/inclusion probability."
        )
        self.variance_score = tally("variance_score", "{score}", "Sum of w(w-1) * score.")
        self.variance_score_squared = tally("variance_score_squared", "{score}", "Sum of w(w-1) * score^2.")

    def add(self, sums: Mapping[tuple[Any, ...], float], sampled: Sequence[WeightedResult] = ()) -> None:
        """A run's results: `sums` of the values per key, as if each were scored with
        probability 1 (the common case; their counts are `gen_ai.evaluation.results`'), and
        those of them scored with a probability below 1."""
        if sampled:
            weights: dict[tuple[Any, ...], float] = {}
            scores = dict(sums)
            variance: dict[tuple[Any, ...], float] = {}
            variance_scores: dict[tuple[Any, ...], float] = {}
            variance_squares: dict[tuple[Any, ...], float] = {}
            for key, value, probability in sampled:
                if not 0.0 < probability < 1.0:
                    continue
                weight = 1.0 / probability
                weights[key] = weights.get(key, 0.0) + weight - 1.0  # counted once in results
                scores[key] += (weight - 1.0) * value
                spread = weight * (weight - 1.0)
                variance[key] = variance.get(key, 0.0) + spread
                variance_scores[key] = variance_scores.get(key, 0.0) + spread * value
                variance_squares[key] = variance_squares.get(key, 0.0) + spread * value * value
            sums = scores
            self.weight.add_counts(weights)
            self.variance_weight.add_counts(variance)
            self.variance_score.add_counts(variance_scores)
            self.variance_score_squared.add_counts(variance_squares)
        self.weighted_score.add_counts(sums)


class PipelineMetrics:
    """Counters and histograms for every stage; one instance per pipeline."""

    def __init__(self, meter_provider: MeterProvider | None = None) -> None:
        provider = meter_provider or metrics.get_meter_provider()
        meter = provider.get_meter(OWN_SCOPE, __version__)
        self.meter = meter
        #: Per quick check (by scorer name): its evaluations since its duration was last recorded.
        self._untimed: dict[str, int] = {}
        self._before_collect: list[Callable[[], None]] = []
        self._create_result_instruments(meter)
        self._create_stage_instruments(meter)
        self._create_scorer_instruments(meter)
        self._create_judge_instruments(meter)
        self.receiver_spans = meter.create_counter(
            "otel_scorers.receiver.spans",
            unit="{span}",
            description="Spans the sidecar's receivers got, by outcome (accepted, refused) and reason.",
        )

    def _create_result_instruments(self, meter: Meter) -> None:
        """The evaluation results themselves: score histogram, result counts, their estimates."""
        self.score = meter.create_histogram(
            GEN_AI_EVALUATION_SCORE,
            unit="1",
            description="Evaluation scores by scorer, label and agent.",
            explicit_bucket_boundaries_advisory=SCORE_BUCKETS,
        )
        self.results = Tally(
            meter,
            GEN_AI_EVALUATION_RESULTS,
            "{result}",
            "Evaluation results by scorer, label, agent and evaluator version.",
            RESULT_KEYS,
            before_observe=self._collecting,
        )
        self.estimates = Estimates(meter, self.results)

    def _create_stage_instruments(self, meter: Meter) -> None:
        """What became of the spans, runs and evaluations on their way through the pipeline."""
        self.runs = Tally(
            meter,
            "otel_scorers.runs",
            "{run}",
            "Agent runs by outcome: assembled, dropped (with reason).",
            (OUTCOME, REASON),
        )
        self.evaluations = Tally(
            meter,
            "otel_scorers.evaluations",
            "{evaluation}",
            "Per scorer binding and run: filtered, sampled_out, rate_limited, judge_lane_full, scored, skipped, error.",
            (EVALUATION_NAME, OUTCOME),
        )
        self.runless_traces = Tally(
            meter,
            "otel_scorers.traces.no_run",
            "{trace}",
            "Traces sampling could pick in which no reader found an agent run, by the instrumentation "
            "scope of their root span (otel-scorers runs --explain shows why; conventions: describes "
            "an instrumentation).",
            (SCOPE,),
        )
        self.late_spans = meter.create_counter(
            "otel_scorers.late_spans",
            unit="{span}",
            description="Spans that arrived after their run was built.",
        )
        self.dropped_spans = meter.create_counter(
            "otel_scorers.spans.dropped", unit="{span}", description="Spans not buffered, by reason."
        )

    def _create_scorer_instruments(self, meter: Meter) -> None:
        """How long the scorers took and how they failed."""
        self.scorer_duration = meter.create_histogram(
            "otel_scorers.scorer.duration",
            unit="s",
            description="Time one scorer took on one run (quick checks: one run in 16).",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.scorer_errors = meter.create_counter(
            "otel_scorers.scorer.errors",
            unit="{error}",
            description="Scorer failures by scorer and error.type.",
        )

    def _create_judge_instruments(self, meter: Meter) -> None:
        """What the LLM judges used and cost, what the budget held back, what was masked."""
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
        self.judge_redactions = meter.create_counter(
            "otel_scorers.judge.redactions",
            unit="{finding}",
            description="Private text masked before the judge saw it, by scorer and otel_scorers.redaction.kind.",
        )

    def time_sparsely(self, scorers: Iterable[str]) -> None:
        """`scorers` are quick checks: their durations are recorded for one evaluation in
        `QUICK_DURATION_EVERY` (`durations_wanted`)."""
        for name in scorers:
            self._untimed.setdefault(name, 0)

    def durations_wanted(self, scorers: Sequence[str]) -> list[int]:
        """The positions in `scorers` (a run's evaluations) whose durations go into
        `otel_scorers.scorer.duration`: every one, but a quick check's (`time_sparsely`) between
        its sampled ones. One thread at a time (the engine's); a race would only shift which
        evaluation is timed."""
        untimed = self._untimed
        wanted = []
        for position, scorer in enumerate(scorers):
            since = untimed.get(scorer)
            if since is not None:
                untimed[scorer] = since + 1 if since + 1 < QUICK_DURATION_EVERY else 0
            if not since:  # not sparse (None), or this one's turn (0)
                wanted.append(position)
        return wanted

    def before_collect(self, callback: Callable[[], None]) -> None:
        """Call `callback` whenever a metric reader collects, before the SDK reads the synchronous
        instruments (observable callbacks run first): measurements held back for a batch are
        recorded in time for every collection."""
        self._before_collect.append(callback)

    def _collecting(self) -> None:
        for callback in self._before_collect:
            try:
                callback()
            except Exception:  # a collection must not fail for it
                logging.getLogger("otel_scorers").warning("recording held-back metrics failed", exc_info=True)

    def observe_queue(self, depth: Callable[[], int], capacity: int) -> None:
        def callback(_options: CallbackOptions) -> Iterable[Observation]:
            return [Observation(depth(), {"otel_scorers.queue.capacity": capacity})]

        self.meter.create_observable_gauge(
            "otel_scorers.queue.depth",
            callbacks=[callback],
            unit="{run}",
            description="Runs waiting to be scored.",
        )

    def observe_count(self, name: str, unit: str, description: str, count: Callable[[], int]) -> None:
        """A gauge of how many of something are held now (`count()`, read at each collection):
        `otel_scorers.traces.buffered`, `otel_scorers.conversations.open`."""

        def callback(_options: CallbackOptions) -> Iterable[Observation]:
            return [Observation(count())]

        self.meter.create_observable_gauge(name, callbacks=[callback], unit=unit, description=description)

    def observe_overdue_calls(self, overdue: Callable[[], dict[str, int]]) -> None:
        """`overdue()`: per sync scorer, its calls still running past their timeout."""

        def callback(_options: CallbackOptions) -> Iterable[Observation]:
            return [Observation(count, {EVALUATION_NAME: name}) for name, count in overdue().items()]

        self.meter.create_observable_gauge(
            "otel_scorers.scorer.overdue_calls",
            callbacks=[callback],
            unit="{call}",
            description="Sync scorer calls still running past their timeout, each holding one of that scorer's threads.",
        )

    def observe_capped(self, capped: Callable[[], dict[tuple[str, str], int]]) -> None:
        """`capped()`: per paced scorer and cap (`signal`, `key`), runs whose risk weight was cut
        so that one signal or one value of the share key keeps within its share (`risk_caps`)."""

        def callback(_options: CallbackOptions) -> Iterable[Observation]:
            return [
                Observation(count, {EVALUATION_NAME: name, "otel_scorers.cap": cap})
                for (name, cap), count in capped().items()
            ]

        self.meter.create_observable_counter(
            "otel_scorers.sampling.capped",
            callbacks=[callback],
            unit="{run}",
            description="Runs of a budget-paced scorer whose risk weight was cut to keep one signal or one share-key value within its share of the budget.",
        )

    def run_outcome(self, outcome: str, reason: str | None = None, amount: int = 1) -> None:
        self.runs.add(amount, outcome, reason or None)

    def evaluation_outcome(self, scorer: str, outcome: str) -> None:
        self.evaluations.add(1, scorer, outcome)
