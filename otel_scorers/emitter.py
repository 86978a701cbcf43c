"""Scores to telemetry: evaluation spans, `gen_ai.evaluation.result` events, metrics, span attributes.

Everything is recorded in the run span's context (same trace, the run span as parent), so a
score sits next to the run in Jaeger and metric exemplars point at the run's trace.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from opentelemetry._logs import Logger, LoggerProvider, get_logger_provider
from opentelemetry.context import Context
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    Tracer,
)
from opentelemetry.trace import TracerProvider as TracerProviderApi

from otel_scorers.console_output import ScoreOutput
from otel_scorers.metrics import (
    AGENT_NAME,
    DURATION_BUCKETS,
    EVALUATION_NAME,
    SCORE_BUCKETS,
    SCORE_LABEL,
    HistogramBatch,
    HistogramEntry,
    PipelineMetrics,
    WeightedResult,
)
from otel_scorers.model import AgentRun, Score
from otel_scorers.otlp_encode import (
    ScoreParts,
    evaluation_log,
    evaluation_span,
    log_context,
    score_parts,
    span_ids,
)
from otel_scorers.score_export import EncodedScores, OtlpScoreExport
from otel_scorers.scorers.judge import BUDGET_SKIP_PREFIX
from otel_scorers.span_record import OWN_SCOPE
from otel_scorers.version import __version__

EVALUATION_EVENT = "gen_ai.evaluation.result"
SCORE_VALUE = "gen_ai.evaluation.score.value"
EXPLANATION = "gen_ai.evaluation.explanation"
SKIPPED = "otel_scorers.skipped"
SAMPLING_PROBABILITY = "otel_scorers.sampling.probability"
SCORE_ATTRIBUTE_PREFIX = "otel_scorers.score."
LABEL_ATTRIBUTE_PREFIX = "otel_scorers.label."
_MAX_EXPLANATION = 2000
_MAX_WRITTEN = 4096
#: Most runs whose histogram measurements wait for the end of a batch.
_RUNS_PER_METRICS_BATCH = 64


def run_span_context(run: AgentRun) -> Context:
    """A context whose current span is the run's span, to parent evaluation spans on it."""
    parent = SpanContext(
        run.trace_id, run.span_id, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED)
    )
    return trace.set_span_in_context(NonRecordingSpan(parent))


def evaluation_attributes(run: AgentRun, score: Score) -> dict[str, Any]:
    """The `gen_ai.evaluation.*` attributes shared by the span and the event."""
    attributes: dict[str, Any] = {EVALUATION_NAME: score.scorer}
    if score.value is not None:
        attributes[SCORE_VALUE] = score.value
    if score.label is not None:
        attributes[SCORE_LABEL] = score.label
    if score.reason:
        attributes[EXPLANATION] = score.reason[:_MAX_EXPLANATION]
    if score.error is not None:
        attributes["error.type"] = score.error.type
    if score.skipped is not None:
        attributes[SKIPPED] = score.skipped
    if score.sampling_probability is not None:
        attributes[SAMPLING_PROBABILITY] = score.sampling_probability
    if run.agent_name:
        attributes[AGENT_NAME] = run.agent_name
    usage = score.usage
    if usage is not None:
        if usage.model:
            attributes["gen_ai.request.model"] = usage.model
        attributes["gen_ai.usage.input_tokens"] = usage.input_tokens
        attributes["gen_ai.usage.output_tokens"] = usage.output_tokens
        if usage.cost_usd is not None:
            attributes["otel_scorers.judge.cost_usd"] = usage.cost_usd
    return attributes


def score_attributes(scores: Sequence[Score]) -> dict[str, Any]:
    """`otel_scorers.score.<scorer>` and `otel_scorers.label.<scorer>` for the run's own span."""
    attributes: dict[str, Any] = {}
    for score in scores:
        if score.value is not None:
            attributes[SCORE_ATTRIBUTE_PREFIX + score.scorer] = score.value
        if score.label is not None:
            attributes[LABEL_ATTRIBUTE_PREFIX + score.scorer] = score.label
    return attributes


def record_judge_usage(metrics: PipelineMetrics, score: Score) -> None:
    """`otel_scorers.judge.tokens` and `.cost` from the usage a judge scorer reported (failed
    scores included: a judge that answered badly was still paid)."""
    usage = score.usage
    if usage is None or usage.calls == 0:
        return
    attributes: dict[str, Any] = {EVALUATION_NAME: score.scorer}
    if usage.model:
        attributes["gen_ai.request.model"] = usage.model
    metrics.judge_tokens.add(usage.input_tokens, {**attributes, "gen_ai.token.type": "input"})
    metrics.judge_tokens.add(usage.output_tokens, {**attributes, "gen_ai.token.type": "output"})
    if usage.cost_usd is not None:
        metrics.judge_cost.add(usage.cost_usd, attributes)


class Emitter:
    """Turns the scores of one run into telemetry: through the given (or global) SDK providers,
    or, with `export`, written straight as OTLP (the same spans and events, at a fraction of the
    CPU). Metrics always go through the meter provider of `metrics`. Each of `outputs` (the
    console's, say) receives the run's scores too, after the telemetry."""

    def __init__(
        self,
        metrics: PipelineMetrics,
        tracer_provider: TracerProviderApi | None = None,
        logger_provider: LoggerProvider | None = None,
        export: OtlpScoreExport | None = None,
        outputs: Sequence[ScoreOutput] = (),
    ) -> None:
        self._outputs = tuple(outputs)
        self._metrics = metrics
        self._tracer_provider = tracer_provider
        self._logger_provider = logger_provider
        self._tracer: trace.Tracer | None = None
        self._logger: Any = None
        self._export = export
        self._written: dict[tuple[Any, ...], ScoreParts] = {}
        self._histograms = HistogramBatch()
        self._runs_in_batch = 0
        self._metric_parts_by_verdict: dict[tuple[Any, ...], _MetricParts] = {}
        metrics.before_collect(self.flush)

    def _instruments(self) -> tuple[trace.Tracer, Any]:
        # Resolved on first use, so a global provider set after construction is honoured.
        if self._tracer is None:
            provider = self._tracer_provider or trace.get_tracer_provider()
            self._tracer = provider.get_tracer(OWN_SCOPE, __version__)
            self._logger = (self._logger_provider or get_logger_provider()).get_logger(OWN_SCOPE, __version__)
        return self._tracer, self._logger

    def emit(self, run: AgentRun, scores: Sequence[Score]) -> None:
        """One evaluation span and one event per score, then the metrics."""
        if not scores:
            return
        context = run_span_context(run)
        if self._export is not None:
            self._write(run, scores)
        else:
            self._through_sdk(run, scores, context)
        self._record_metrics(run, scores, context)
        for output in self._outputs:
            output.emit(run, scores)

    def _through_sdk(self, run: AgentRun, scores: Sequence[Score], context: Context) -> None:
        tracer, logger = self._instruments()
        now = time.time_ns()
        for score in scores:
            emit_evaluation(tracer, logger, context, score, evaluation_attributes(run, score), now)

    def _write(self, run: AgentRun, scores: Sequence[Score]) -> None:
        assert self._export is not None
        now = time.time_ns()
        trace_id, parent = run.trace_id.to_bytes(16, "big"), run.span_id.to_bytes(8, "big")
        event_context = log_context(trace_id, parent, now, EVALUATION_EVENT)
        spans: list[bytes] = []
        logs: list[bytes] = []
        for score in scores:
            parts = self._parts(run, score)
            start_ns = score.start_ns or now
            end_ns = start_ns + int(score.duration_s * 1e9)
            spans.append(evaluation_span(span_ids(trace_id, _new_span_id(), parent), parts, start_ns, end_ns))
            logs.append(evaluation_log(end_ns, parts, event_context))
        self._export.submit(EncodedScores(tuple(spans), tuple(logs)))

    def _parts(self, run: AgentRun, score: Score) -> ScoreParts:
        """The written parts of a score's span and event, made once per scorer and verdict: a
        check's results repeat run after run."""
        key = (
            score.scorer,
            score.value,
            score.label,
            score.reason,
            score.error,
            score.skipped,
            score.usage,
            run.agent_name,
            score.sampling_probability,
        )
        try:
            parts = self._written.get(key)
        except TypeError:  # an unhashable field: write it without remembering
            return self._new_parts(run, score)
        if parts is None:
            if len(self._written) >= _MAX_WRITTEN:
                self._written.clear()  # bounded: unique explanations (a judge's) would grow it
            parts = self._written[key] = self._new_parts(run, score)
        return parts

    @staticmethod
    def _new_parts(run: AgentRun, score: Score) -> ScoreParts:
        error = error_description(score) if score.error is not None else None
        return score_parts(f"evaluate {score.scorer}", evaluation_attributes(run, score), error)

    def flush(self) -> None:
        """Record the histogram measurements of the runs emitted since the last flush: `emit`
        calls this when a batch is full, the engine a moment after its last run and when
        flushed, and every metric reader's collection before it reads them. Any thread."""
        if self._histograms:
            self._histograms.record()

    def _record_metrics(self, run: AgentRun, scores: Sequence[Score], context: Context) -> None:
        metrics = self._metrics
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
                parts = self._metric_parts(score.scorer, score.label, agent_name)
                entries.append(
                    HistogramBatch.entry(
                        metrics.scorer_duration,
                        DURATION_BUCKETS,
                        score.duration_s,
                        parts.duration_attributes,
                        context,
                        parts.duration_group,
                    )
                )
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
            if score.usage is not None:
                record_judge_usage(metrics, score)
            if score.skipped is not None:
                metrics.evaluation_outcome(score.scorer, "skipped")
                if score.skipped.startswith(BUDGET_SKIP_PREFIX):
                    metrics.judge_budget_skips.add(1, {EVALUATION_NAME: score.scorer})
                continue
            duration_attributes = {EVALUATION_NAME: score.scorer}
            entries.append(
                HistogramBatch.entry(
                    metrics.scorer_duration, DURATION_BUCKETS, score.duration_s, duration_attributes, context
                )
            )
            if score.error is not None:
                metrics.evaluation_outcome(score.scorer, "error")
                metrics.scorer_errors.add(1, {EVALUATION_NAME: score.scorer, "error.type": score.error.type})
                continue
            metrics.evaluation_outcome(score.scorer, "scored")
            if score.value is not None:
                metric_attributes = _score_metric_attributes(score.scorer, score.label, agent_name)
                entries.append(
                    HistogramBatch.entry(
                        metrics.score, SCORE_BUCKETS, score.value, metric_attributes, context
                    )
                )
            key = (score.scorer, score.label, agent_name)
            results[key] = results.get(key, 0) + 1
            if score.value is not None:
                sums[key] = sums.get(key, 0.0) + score.value
                if score.sampling_probability is not None:
                    sampled.append((key, score.value, score.sampling_probability))
        if outcomes:
            metrics.evaluations.add_counts(outcomes)
        if results:
            metrics.results.add_counts(results)
            metrics.estimates.add(results, sums, sampled)
        self._histograms.extend(entries)
        self._runs_in_batch += 1
        if self._runs_in_batch >= _RUNS_PER_METRICS_BATCH:
            self._runs_in_batch = 0
            self._histograms.record()

    def _metric_parts(self, scorer: str, label: str | None, agent_name: str | None) -> _MetricParts:
        key = (scorer, label, agent_name)
        parts = self._metric_parts_by_verdict.get(key)
        if parts is None:
            if len(self._metric_parts_by_verdict) >= _MAX_WRITTEN:
                self._metric_parts_by_verdict.clear()
            duration_attributes = {EVALUATION_NAME: scorer}
            score_attributes = _score_metric_attributes(scorer, label, agent_name)
            parts = self._metric_parts_by_verdict[key] = _MetricParts(
                duration_attributes,
                HistogramBatch.group(self._metrics.scorer_duration, duration_attributes),
                score_attributes,
                HistogramBatch.group(self._metrics.score, score_attributes),
                (scorer, "scored"),
                key,
            )
        return parts


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


def _score_metric_attributes(scorer: str, label: str | None, agent_name: str | None) -> dict[str, Any]:
    attributes = {EVALUATION_NAME: scorer}
    if agent_name:
        attributes[AGENT_NAME] = agent_name
    if label is not None:
        attributes[SCORE_LABEL] = label
    return attributes


def error_description(score: Score) -> str:
    """The status description of a failed scorer's evaluation span."""
    assert score.error is not None
    return f"{score.error.type}: {score.error.message}"


def _new_span_id() -> int:
    # As the SDK's RandomIdGenerator: 64 random bits, never the invalid id 0.
    span_id = random.getrandbits(64)
    while span_id == 0:
        span_id = random.getrandbits(64)
    return span_id


def emit_evaluation(
    tracer: Tracer,
    logger: Logger,
    context: Context,
    score: Score,
    attributes: Mapping[str, Any],
    now_ns: int,
    links: Sequence[Link] | None = None,
) -> None:
    """One score through the SDK: its `evaluate {scorer}` span (a child of `context`'s span,
    timed as the score was) and its `gen_ai.evaluation.result` event."""
    start_ns = score.start_ns or now_ns
    end_ns = start_ns + int(score.duration_s * 1e9)
    span = tracer.start_span(
        f"evaluate {score.scorer}",
        context=context,
        kind=SpanKind.INTERNAL,
        attributes=attributes,
        links=links,
        start_time=start_ns,
    )
    if score.error is not None:
        span.set_status(Status(StatusCode.ERROR, error_description(score)))
    span.end(end_time=end_ns)
    logger.emit(timestamp=end_ns, context=context, event_name=EVALUATION_EVENT, attributes=attributes)
