"""A conversation's scores as telemetry.

Each score is an evaluation span `evaluate {scorer}` in the trace of the conversation's last run,
a child of that run's span, with a link to each kept turn's run span, and a
`gen_ai.evaluation.result` event in the same context; both carry `gen_ai.conversation.id`. The
metrics are the run-level ones (`gen_ai.evaluation.score`, `gen_ai.evaluation.results`,
`otel_scorers.scorer.duration`...: by scorer, label and agent, as for the conversation's last run): a conversation id is never a metric attribute, since every conversation would
be a new series.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry._logs import LoggerProvider
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, TraceFlags
from opentelemetry.trace import TracerProvider as TracerProviderApi

from otel_scorers.conversation_turns import Conversation, Turn
from otel_scorers.emission.attributes import evaluation_attributes
from otel_scorers.emission.metrics_output import MetricsOutput
from otel_scorers.emission.sdk_output import SdkOutput, emit_evaluation
from otel_scorers.metrics import OUTCOME, PipelineMetrics, Tally
from otel_scorers.model import AgentRun, Score

CONVERSATION_ID = "gen_ai.conversation.id"
TURNS = "otel_scorers.conversation.turns"
TRIMMED = "otel_scorers.conversation.trimmed_turns"
ENDED_BY = "otel_scorers.conversation.ended_by"
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)


def _span_context(turn: Turn, remote: bool) -> SpanContext:
    return SpanContext(turn.trace_id, turn.span_id, is_remote=remote, trace_flags=_SAMPLED)


def conversation_attributes(conversation: Conversation, score: Score) -> dict[str, Any]:
    """The run-level evaluation attributes (`emission.attributes.evaluation_attributes`), for the agent of the
    conversation's last turns, and what identifies the conversation."""
    attributes = evaluation_attributes(_last_run(conversation), score)
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
    """A conversation's scores: through the SDK providers, each evaluation span linked to the
    kept turns' runs, and into the run-level metrics as the scores of its last run."""

    def __init__(
        self,
        metrics: PipelineMetrics,
        tracer_provider: TracerProviderApi | None = None,
        logger_provider: LoggerProvider | None = None,
        on_scores: Callable[[AgentRun, Sequence[Score]], None] | None = None,
    ) -> None:
        self._spans = SdkOutput(tracer_provider, logger_provider)
        self._metrics = MetricsOutput(metrics)
        #: Also given each conversation's scores, as those of its last run (the agreement join).
        self._on_scores = on_scores

    def emit(self, conversation: Conversation, scores: Sequence[Score]) -> None:
        if not scores:
            return
        tracer, logger = self._spans.instruments()
        context = trace.set_span_in_context(NonRecordingSpan(_span_context(conversation.last, remote=False)))
        links = [Link(_span_context(turn, remote=True)) for turn in conversation.turns]
        now = time.time_ns()
        for score in scores:
            emit_evaluation(
                tracer, logger, context, score, conversation_attributes(conversation, score), now, links
            )
        self._metrics.emit(_last_run(conversation), scores)
        if self._on_scores is not None:
            last = conversation.last
            run = AgentRun(
                last.trace_id,
                last.span_id,
                conversation.agent_name,
                None,
                None,
                conversation_id=conversation.id,
            )
            self._on_scores(run, scores)


def _last_run(conversation: Conversation) -> AgentRun:
    """The conversation's last run, as far as its scores' attributes and metrics tell of it."""
    last = conversation.last
    return AgentRun(last.trace_id, last.span_id, conversation.agent_name, None, None)
