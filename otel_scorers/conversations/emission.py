"""A conversation's scores as telemetry.

Each score is an evaluation span `evaluate {scorer}` in the trace of the conversation's last run,
a child of that run's span, with a link to each kept turn's run span, and a
`gen_ai.evaluation.result` event in the same context; both carry `gen_ai.conversation.id`. The
metrics are the run-level ones (`gen_ai.evaluation.score`, `gen_ai.evaluation.results`, by scorer,
label and agent): a conversation id is never a metric attribute, since every conversation would
be a new series.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry._logs import LoggerProvider, get_logger_provider
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, TraceFlags
from opentelemetry.trace import TracerProvider as TracerProviderApi

from otel_scorers.conversations.turns import Conversation, Turn
from otel_scorers.emitter import (
    emit_evaluation,
    evaluation_attributes,
    record_judge_usage,
)
from otel_scorers.metrics import AGENT_NAME, EVALUATION_NAME, OUTCOME, SCORE_LABEL, PipelineMetrics, Tally
from otel_scorers.model import AgentRun, Score
from otel_scorers.span_record import OWN_SCOPE
from otel_scorers.version import __version__

CONVERSATION_ID = "gen_ai.conversation.id"
TURNS = "otel_scorers.conversation.turns"
TRIMMED = "otel_scorers.conversation.trimmed_turns"
ENDED_BY = "otel_scorers.conversation.ended_by"
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)


def _span_context(turn: Turn, remote: bool) -> SpanContext:
    return SpanContext(turn.trace_id, turn.span_id, is_remote=remote, trace_flags=_SAMPLED)


def conversation_attributes(conversation: Conversation, score: Score) -> dict[str, Any]:
    """The run-level evaluation attributes (`emitter.evaluation_attributes`), for the agent of the
    conversation's last turns, and what identifies the conversation."""
    last = conversation.last
    subject = AgentRun(last.trace_id, last.span_id, conversation.agent_name, None, None)
    attributes = evaluation_attributes(subject, score)
    attributes[CONVERSATION_ID] = conversation.id
    attributes[TURNS] = conversation.turn_count
    attributes[ENDED_BY] = conversation.ended_by
    if conversation.trimmed:
        attributes[TRIMMED] = conversation.trimmed
    return attributes


class ConversationCounts:
    """`otel_scorers.conversations`: what became of conversations and their turns, by outcome
    (`scored`, `sampled_out`, `evicted`, `trimmed_turn`, `duplicate_turn`, `dropped_shutdown`...)."""

    def __init__(self, metrics: PipelineMetrics) -> None:
        self._tally = Tally(
            metrics.meter,
            "otel_scorers.conversations",
            "{item}",
            "Conversations and turns by outcome: closed (by end reason), sampled_out, evicted, trimmed_turn, dropped_shutdown.",
            (OUTCOME, "otel_scorers.conversation.ended_by"),
        )
        self.totals: dict[str, int] = {}

    def add(self, outcome: str, amount: int = 1, ended_by: str | None = None) -> None:
        self._tally.add(amount, outcome, ended_by)
        self.totals[outcome] = self.totals.get(outcome, 0) + amount


class ConversationEmitter:
    def __init__(
        self,
        metrics: PipelineMetrics,
        tracer_provider: TracerProviderApi | None = None,
        logger_provider: LoggerProvider | None = None,
    ) -> None:
        self._metrics = metrics
        self._tracer_provider = tracer_provider
        self._logger_provider = logger_provider
        self._tracer: trace.Tracer | None = None
        self._logger: Any = None

    def _instruments(self) -> tuple[trace.Tracer, Any]:
        if self._tracer is None:  # on first use: a global provider set later is honoured
            self._tracer = (self._tracer_provider or trace.get_tracer_provider()).get_tracer(
                OWN_SCOPE, __version__
            )
            self._logger = (self._logger_provider or get_logger_provider()).get_logger(OWN_SCOPE, __version__)
        return self._tracer, self._logger

    def emit(self, conversation: Conversation, scores: Sequence[Score]) -> None:
        if not scores:
            return
        tracer, logger = self._instruments()
        context = trace.set_span_in_context(NonRecordingSpan(_span_context(conversation.last, remote=False)))
        links = [Link(_span_context(turn, remote=True)) for turn in conversation.turns]
        now = time.time_ns()
        agent = conversation.agent_name
        for score in scores:
            emit_evaluation(
                tracer, logger, context, score, conversation_attributes(conversation, score), now, links
            )
            self._record(score, agent)

    def _record(self, score: Score, agent: str | None) -> None:
        metrics = self._metrics
        record_judge_usage(metrics, score)
        if score.skipped is not None:
            metrics.evaluation_outcome(score.scorer, "skipped")
            return
        if score.error is not None:
            metrics.evaluation_outcome(score.scorer, "error")
            metrics.scorer_errors.add(1, {EVALUATION_NAME: score.scorer, "error.type": score.error.type})
            return
        metrics.evaluation_outcome(score.scorer, "scored")
        attributes: dict[str, Any] = {EVALUATION_NAME: score.scorer}
        if agent:
            attributes[AGENT_NAME] = agent
        if score.label is not None:
            attributes[SCORE_LABEL] = score.label
        if score.value is not None:
            metrics.score.record(score.value, attributes)
        metrics.results.add(1, score.scorer, score.label, agent)
