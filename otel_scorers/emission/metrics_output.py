"""Scores as metrics: `gen_ai.evaluation.score`, `gen_ai.evaluation.results` and its sampling
estimates, `otel_scorers.scorer.duration`, `otel_scorers.evaluations`, the scorer errors and the
judge's tokens and cost, each measurement in the run span's context (exemplars point at the run).
A binary result (`Score.binary`: pass/fail, its value 0 or 1) is counted and not measured: its
histogram point would say nothing its label's count does not, at the cost of a measurement and
the histogram's bucket series for every check and agent.

Histogram measurements are held back and recorded in batches, the costliest part of a run's
metrics otherwise: when a batch is full, when the pipeline flushes at the end of a burst, and
before every metric reader's collection (so that what a reader reads is always whole). So are the
counts: what a run adds to them is worked out once for runs of the same verdicts and agent (a
`_RunPlan`; quick checks give the same few verdicts run after run), and the batch adds each
plan's counts times its runs. A continuous value is no verdict: a plan leaves it out, and the
run's values are summed apart for the estimates."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from otel_scorers.conversation_turns import MAX_CONVERSATION_ID, Conversation, bounded_conversation_id
from otel_scorers.emission.attributes import conversation_run, run_span_context
from otel_scorers.emission.histogram_batch import HistogramBatch, HistogramEntry
from otel_scorers.emission.outputs import SafePoint
from otel_scorers.fork_safety import renew_in_child
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
#: A continuous value in a run's verdicts: whether there is one, not what it is.
_CONTINUOUS = object()
#: Plans counted between two calls of the engine's safe point (a plan per run for runs with a
#: judge's usage or a scorer's error: about 8 µs each).
_PLANS_PER_SAFE_POINT = 8


class MetricsOutput:
    def __init__(self, metrics: PipelineMetrics) -> None:
        self._metrics = metrics
        self._histograms = HistogramBatch()
        self._runs_in_batch = 0
        self._parts_by_verdict: dict[tuple[Any, ...], _MetricParts] = {}
        self._plans: dict[tuple[Any, ...], _RunPlan] = {}
        #: Runs emitted since the counts were last added, by plan.
        self._planned: dict[_RunPlan, int] = {}
        #: The continuous values of those runs: their sums by result, and those sampled.
        self._value_sums: dict[tuple[Any, ...], float] = {}
        self._values_sampled: list[WeightedResult] = []
        # The engine's thread emits; a metric reader's collection flushes.
        self._lock = threading.Lock()
        self._safe_point: SafePoint | None = None
        #: The thread that emits (the engine's), known from its first run: only there is the
        #: engine's safe point called (a flush may come from a host thread or a metric reader).
        self._emitting: int | None = None
        renew_in_child(self)
        metrics.before_collect(self.flush)

    def renew_after_fork(self) -> None:
        self._lock = threading.Lock()
        self._emitting = None

    def yield_with(self, safe_point: SafePoint) -> None:
        """Called between the plans counted and the histogram measurements recorded as a batch
        ends on the engine's thread (a batch of 64 runs is up to a millisecond of work)."""
        self._safe_point = safe_point

    def flush(self) -> None:
        """Add the counts and record the histogram measurements held back so far. Any thread."""
        with self._lock:
            planned, self._planned = self._planned, {}
            value_sums, self._value_sums = self._value_sums, {}
            values_sampled, self._values_sampled = self._values_sampled, []
        on_engine = self._emitting is not None and threading.get_ident() == self._emitting
        safe_point = self._safe_point if on_engine else None
        for index, (plan, runs) in enumerate(planned.items()):
            if safe_point is not None and index % _PLANS_PER_SAFE_POINT == _PLANS_PER_SAFE_POINT - 1:
                safe_point()
            plan.count(self._metrics, runs)
        if value_sums:
            self._metrics.estimates.add(value_sums, values_sampled)
        if self._histograms:
            self._histograms.record(safe_point)

    def behind(self) -> bool:
        return False  # the metric readers collect what is recorded, whenever they come

    def emit_conversation(self, conversation: Conversation, scores: Sequence[Score]) -> None:
        """As the scores of the conversation's last run: the conversation id is never a label."""
        self.emit(conversation_run(conversation), scores)

    def emit(self, run: AgentRun, scores: Sequence[Score]) -> None:
        metrics = self._metrics
        if self._emitting is None:
            self._emitting = threading.get_ident()
        agent_name = run.agent_name or None
        if agent_name is not None and len(agent_name) > MAX_CONVERSATION_ID:
            # A sender names its agents, and each series a metric keeps for good holds the name:
            # 2,500 agents of 100 kB names held 257 MB. Cut as a conversation id is.
            agent_name = bounded_conversation_id(agent_name)[0]
        # What of its scores decides a run's counts, read inline (a call per score would cost
        # more than the rest): only runs that `_remembered` says are worth it are planned once.
        # A continuous value is not part of it (whether there is one is).
        key = (
            agent_name,
            *[
                (
                    score.scorer,
                    score.value if score.binary or score.value is None else _CONTINUOUS,
                    score.label,
                    score.skipped,
                    score.error,
                    score.usage,
                    score.binary,
                    score.evaluator_version,
                    score.sampling_probability,
                )
                for score in scores
            ],
        )
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plan(scores, agent_name)
            if _remembered(scores):
                if len(self._plans) >= _MAX_VERDICTS:
                    self._plans.clear()
                self._plans[key] = plan
            else:
                for score in scores:
                    _count_apart(metrics, score)
        if plan.timed or plan.measured:
            self._measure(run, scores, plan)
        with self._lock:
            self._planned[plan] = self._planned.get(plan, 0) + 1
            if plan.continuous:
                value_sums = self._value_sums
                for index, result, probability in plan.continuous:
                    value = scores[index].value
                    assert value is not None  # a continuous entry is a score with a value
                    value_sums[result] = value_sums.get(result, 0.0) + value
                    if probability is not None:
                        self._values_sampled.append((result, value, probability))
        self._runs_in_batch += 1
        if self._runs_in_batch >= _RUNS_PER_METRICS_BATCH:
            self._runs_in_batch = 0
            self.flush()

    def _measure(self, run: AgentRun, scores: Sequence[Score], plan: _RunPlan) -> None:
        """Hold back the run's histogram measurements: its scores' durations and its continuous
        values (a binary result is counted, not measured)."""
        metrics = self._metrics
        wanted = metrics.durations_wanted(plan.timed_scorers)
        if not wanted and not plan.measured:
            return  # most runs of quick checks: no duration timed this time, no value measured
        # Made only if one of the run's measurements decides an exemplar (a few per batch).
        context = partial(run_span_context, run)
        entries: list[HistogramEntry] = []
        for position in wanted:
            index, _, attributes, group = plan.timed[position]
            entries.append(
                HistogramBatch.entry(
                    metrics.scorer_duration,
                    DURATION_BUCKETS,
                    scores[index].duration_s,
                    attributes,
                    context,
                    group,
                )
            )
        for index, attributes, group in plan.measured:
            value = scores[index].value
            assert value is not None  # a measured entry is a score with a value
            entries.append(
                HistogramBatch.entry(metrics.score, SCORE_BUCKETS, value, attributes, context, group)
            )
        if entries:
            self._histograms.extend(entries)

    def _plan(self, scores: Sequence[Score], agent_name: str | None) -> _RunPlan:
        """What a run of these scores adds to the tallies, and which of its scores are timed
        and measured."""
        plan = _RunPlan({}, {}, {}, [], [], [], [], [])
        for index, score in enumerate(scores):
            if score.skipped is not None:
                plan.add(plan.outcomes, (score.scorer, "skipped"))
                continue
            parts = self._parts(score.scorer, score.label, agent_name, score.evaluator_version)
            plan.timed.append((index, score.scorer, parts.duration_attributes, parts.duration_group))
            plan.timed_scorers.append(score.scorer)
            if score.error is not None:
                plan.add(plan.outcomes, (score.scorer, "error"))
                continue
            plan.add(plan.outcomes, parts.scored)
            plan.add(plan.results, parts.result)
            if score.value is None:
                continue
            if not score.binary:  # its value is the run's own: summed as the run is emitted
                plan.measured.append((index, parts.score_attributes, parts.score_group))
                plan.continuous.append((index, parts.result, score.sampling_probability))
                continue
            plan.add(plan.sums, parts.result, score.value)
            if score.sampling_probability is not None:
                plan.sampled.append((parts.result, score.value, score.sampling_probability))
        return plan

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


def _remembered(scores: Sequence[Score]) -> bool:
    """Whether a run of these scores is planned once for all its like: not when one of them is
    counted apart as well (a judge's usage, an error, a budget skip)."""
    for score in scores:
        if score.usage is not None or score.error is not None:
            return False
        if score.skipped is not None and score.skipped.startswith(BUDGET_SKIP_PREFIX):
            return False
    return True


@dataclass(frozen=True, slots=True, eq=False)
class _RunPlan:
    """What one run adds to the tallies (`otel_scorers.evaluations` outcomes, the result counts,
    the sums of the binary values and those sampled, for the estimates), the same for every run
    of the same verdicts and agent; which of its scores are timed (index, scorer, attributes,
    group) and measured into the score histogram (index, attributes, group); and where its
    continuous values go in the estimates (index, result, sampling probability), each run's own.
    Never changed once made: runs share it. Hashed by identity."""

    outcomes: dict[tuple[Any, ...], float]
    results: dict[tuple[Any, ...], float]
    sums: dict[tuple[Any, ...], float]
    sampled: list[WeightedResult]
    timed: list[tuple[int, str, Mapping[str, Any], tuple[Any, ...]]]
    measured: list[tuple[int, Mapping[str, Any], tuple[Any, ...]]]
    continuous: list[tuple[int, tuple[Any, ...], float | None]]
    #: The scorers of `timed`, in its order (`PipelineMetrics.durations_wanted` of a run).
    timed_scorers: list[str]

    @staticmethod
    def add(tally: dict[tuple[Any, ...], float], key: tuple[Any, ...], amount: float = 1) -> None:
        tally[key] = tally.get(key, 0) + amount

    def count(self, metrics: PipelineMetrics, runs: int) -> None:
        """Add `runs` runs of this plan to the tallies."""
        if self.outcomes:
            metrics.evaluations.add_counts(_times(self.outcomes, runs))
        if self.results:
            metrics.results.add_counts(_times(self.results, runs))
            metrics.estimates.add(_times(self.sums, runs), self.sampled * runs)


def _times(tally: dict[tuple[Any, ...], float], runs: int) -> dict[tuple[Any, ...], float]:
    return tally if runs == 1 else {key: amount * runs for key, amount in tally.items()}


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


def _count_apart(metrics: PipelineMetrics, score: Score) -> None:
    """What a score adds besides its run's tallies: a judge's usage, a scorer's error, a skip
    for the judge's budget."""
    if score.usage is not None:
        record_judge_usage(metrics, score)
    if score.skipped is not None:
        if score.skipped.startswith(BUDGET_SKIP_PREFIX):
            metrics.judge_budget_skips.add(1, {EVALUATION_NAME: score.scorer})
    elif score.error is not None:
        metrics.scorer_errors.add(1, {EVALUATION_NAME: score.scorer, "error.type": score.error.type})


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
