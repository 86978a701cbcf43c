"""Scores as metrics: `gen_ai.evaluation.score`, `gen_ai.evaluation.results` and its sampling
estimates, `otel_scorers.scorer.duration`, `otel_scorers.evaluations`, the scorer errors and the
judge's tokens and cost, each measurement in the run span's context (exemplars point at the run).
A binary result (`Score.binary`: pass/fail, its value 0 or 1) is counted and not measured: its
histogram point would say nothing its label's count does not, at the cost of a measurement and
the histogram's bucket series for every check and agent.

Histogram measurements are held back and recorded in batches, the costliest part of a run's
metrics otherwise: when a batch is full, when the pipeline flushes at the end of a burst, and
before every metric reader's collection (so that what a reader reads is always whole)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from otel_scorers.conversation_turns import Conversation
from otel_scorers.emission.attributes import conversation_run, run_span_context
from otel_scorers.emission.histogram_batch import HistogramBatch, HistogramEntry, MeasurementContext
from otel_scorers.gen_ai_names import GEN_AI_REQUEST_MODEL, GEN_AI_TOKEN_TYPE
from otel_scorers.metrics import (
    AGENT_NAME,
    DURATION_BUCKETS,
    EVALUATION_NAME,
    EVALUATOR_VERSION,
    SCORE_BUCKETS,
    SCORE_LABEL,
    PipelineMetrics,
    WeightedResult,
)
from otel_scorers.model import BUDGET_SKIP_PREFIX, AgentRun, Score

#: Most runs whose histogram measurements wait for the end of a batch.
_RUNS_PER_METRICS_BATCH = 64
#: Most verdicts whose metric attribute sets are remembered.
_MAX_VERDICTS = 4096


class MetricsOutput:
    def __init__(self, metrics: PipelineMetrics) -> None:
        self._metrics = metrics
        self._histograms = HistogramBatch()
        self._runs_in_batch = 0
        self._parts_by_verdict: dict[tuple[Any, ...], _MetricParts] = {}
        metrics.before_collect(self.flush)

    def flush(self) -> None:
        """Record the histogram measurements held back so far. Any thread."""
        if self._histograms:
            self._histograms.record()

    def behind(self) -> bool:
        return False  # the metric readers collect what is recorded, whenever they come

    def emit_conversation(self, conversation: Conversation, scores: Sequence[Score]) -> None:
        """As the scores of the conversation's last run: the conversation id is never a label."""
        self.emit(conversation_run(conversation), scores)

    def emit(self, run: AgentRun, scores: Sequence[Score]) -> None:
        metrics = self._metrics
        # Made only if one of the run's measurements decides an exemplar (a few per batch).
        context = partial(run_span_context, run)
        agent_name = run.agent_name or None
        entries: list[HistogramEntry] = []
        outcomes: dict[tuple[Any, ...], float] = {}
        results: dict[tuple[Any, ...], float] = {}
        sums: dict[tuple[Any, ...], float] = {}  # of the values per result key, for the estimates
        sampled: list[WeightedResult] = []
        for score in scores:
            if (
                score.usage is None
                and score.skipped is None
                and score.error is None
                and score.value is not None
            ):
                # A scored result, the common case: its attribute sets made once per verdict.
                parts = self._parts(score.scorer, score.label, agent_name, score.evaluator_version)
                _time(metrics, score, context, entries, parts.duration_attributes, parts.duration_group)
                if not score.binary:  # a binary result is counted (`results`), not measured
                    entries.append(
                        HistogramBatch.entry(
                            metrics.score,
                            SCORE_BUCKETS,
                            score.value,
                            parts.score_attributes,
                            context,
                            parts.score_group,
                        )
                    )
                outcomes[parts.scored] = outcomes.get(parts.scored, 0) + 1
                results[parts.result] = results.get(parts.result, 0) + 1
                sums[parts.result] = sums.get(parts.result, 0.0) + score.value
                if score.sampling_probability is not None:
                    sampled.append((parts.result, score.value, score.sampling_probability))
                continue
            # Anything else (a skip, an error, a judge's usage, a result without a value) is rare
            # enough to pay for a call: the common case above stays inline.
            _tally_other(metrics, score, agent_name, context, entries, results, sums, sampled)
        if outcomes:
            metrics.evaluations.add_counts(outcomes)
        if results:
            metrics.results.add_counts(results)
            metrics.estimates.add(sums, sampled)
        self._histograms.extend(entries)
        self._runs_in_batch += 1
        if self._runs_in_batch >= _RUNS_PER_METRICS_BATCH:
            self._runs_in_batch = 0
            self._histograms.record()

    def _parts(
        self, scorer: str, label: str | None, agent_name: str | None, version: str | None
    ) -> _MetricParts:
        key = (scorer, label, agent_name, version)
        parts = self._parts_by_verdict.get(key)
        if parts is None:
            if len(self._parts_by_verdict) >= _MAX_VERDICTS:
                self._parts_by_verdict.clear()
            duration_attributes = {EVALUATION_NAME: scorer}
            score_attributes = _score_metric_attributes(scorer, label, agent_name, version)
            parts = self._parts_by_verdict[key] = _MetricParts(
                duration_attributes,
                HistogramBatch.group(self._metrics.scorer_duration, duration_attributes),
                score_attributes,
                HistogramBatch.group(self._metrics.score, score_attributes),
                (scorer, "scored"),
                key,
            )
        return parts


def record_judge_usage(metrics: PipelineMetrics, score: Score) -> None:
    """`otel_scorers.judge.tokens` and `.cost` from the usage a judge scorer reported (failed
    scores included: a judge that answered badly was still paid), and `.redactions` from what
    its prompts had masked."""
    usage = score.usage
    redacted = score.details.get("redacted")
    if redacted:
        for kind, count in redacted.items():
            metrics.judge_redactions.add(
                count, {EVALUATION_NAME: score.scorer, "otel_scorers.redaction.kind": kind}
            )
    if usage is None or usage.calls == 0:
        return
    attributes: dict[str, Any] = {EVALUATION_NAME: score.scorer}
    if usage.model:
        attributes[GEN_AI_REQUEST_MODEL] = usage.model
    metrics.judge_tokens.add(usage.input_tokens, {**attributes, GEN_AI_TOKEN_TYPE: "input"})
    metrics.judge_tokens.add(usage.output_tokens, {**attributes, GEN_AI_TOKEN_TYPE: "output"})
    if usage.cost_usd is not None:
        metrics.judge_cost.add(usage.cost_usd, attributes)


def _tally_other(
    metrics: PipelineMetrics,
    score: Score,
    agent_name: str | None,
    context: MeasurementContext,
    entries: list[HistogramEntry],
    results: dict[tuple[Any, ...], float],
    sums: dict[tuple[Any, ...], float],
    sampled: list[WeightedResult],
) -> None:
    """A score that is not a plain scored result: its judge usage, its outcome, and the
    measurements it makes into the run's tallies (its attribute sets made afresh, not cached)."""
    if score.usage is not None:
        record_judge_usage(metrics, score)
    if score.skipped is not None:
        metrics.evaluation_outcome(score.scorer, "skipped")
        if score.skipped.startswith(BUDGET_SKIP_PREFIX):
            metrics.judge_budget_skips.add(1, {EVALUATION_NAME: score.scorer})
        return
    _time(metrics, score, context, entries, {EVALUATION_NAME: score.scorer})
    if score.error is not None:
        metrics.evaluation_outcome(score.scorer, "error")
        metrics.scorer_errors.add(1, {EVALUATION_NAME: score.scorer, "error.type": score.error.type})
        return
    metrics.evaluation_outcome(score.scorer, "scored")
    if score.value is not None and not score.binary:
        metric_attributes = _score_metric_attributes(
            score.scorer, score.label, agent_name, score.evaluator_version
        )
        entries.append(
            HistogramBatch.entry(metrics.score, SCORE_BUCKETS, score.value, metric_attributes, context)
        )
    key = (score.scorer, score.label, agent_name, score.evaluator_version)
    results[key] = results.get(key, 0) + 1
    if score.value is not None:
        sums[key] = sums.get(key, 0.0) + score.value
        if score.sampling_probability is not None:
            sampled.append((key, score.value, score.sampling_probability))


def _time(
    metrics: PipelineMetrics,
    score: Score,
    context: MeasurementContext,
    entries: list[HistogramEntry],
    attributes: Mapping[str, Any],
    group: tuple[Any, ...] | None = None,
) -> None:
    """The score's duration among the run's measurements, where it is wanted
    (`PipelineMetrics.duration_wanted`: a quick check's on one run in 16)."""
    if metrics.duration_wanted(score.scorer):
        entries.append(
            HistogramBatch.entry(
                metrics.scorer_duration, DURATION_BUCKETS, score.duration_s, attributes, context, group
            )
        )


@dataclass(frozen=True, slots=True)
class _MetricParts:
    """A scored result's metric attribute sets, and its keys in the tallies (never mutated: the
    same dicts go with every run's measurements)."""

    duration_attributes: Mapping[str, Any]
    duration_group: tuple[Any, ...]
    score_attributes: Mapping[str, Any]
    score_group: tuple[Any, ...]
    scored: tuple[Any, ...]
    result: tuple[Any, ...]


def _score_metric_attributes(
    scorer: str, label: str | None, agent_name: str | None, version: str | None
) -> dict[str, Any]:
    attributes = {EVALUATION_NAME: scorer}
    if agent_name:
        attributes[AGENT_NAME] = agent_name
    if label is not None:
        attributes[SCORE_LABEL] = label
    if version is not None:
        attributes[EVALUATOR_VERSION] = version
    return attributes
