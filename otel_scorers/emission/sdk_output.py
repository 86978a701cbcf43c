"""Evaluation spans and `gen_ai.evaluation.result` events through the OpenTelemetry SDK's
providers (the given ones, else the global ones, resolved on first use so that a global provider
set after the processor is made is honoured)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry._logs import Logger, LoggerProvider, get_logger_provider
from opentelemetry.context import Context
from opentelemetry.trace import Link, SpanKind, Status, StatusCode, Tracer
from opentelemetry.trace import TracerProvider as TracerProviderApi

from otel_scorers.conversation_turns import Conversation
from otel_scorers.emission.attributes import (
    EVALUATION_EVENT,
    conversation_attributes,
    conversation_run,
    error_description,
    evaluation_attributes,
    run_span_context,
    span_timing,
    turn_links,
)
from otel_scorers.emission.outputs import SafePoint
from otel_scorers.model import AgentRun, Score
from otel_scorers.span_record import OWN_SCOPE
from otel_scorers.version import __version__


class SdkOutput:
    """One evaluation span and one event per score, through the SDK. `backlog()`, when given, says
    how full the providers' export queues are (0 to 1): past half, scoring waits."""

    def __init__(
        self,
        tracer_provider: TracerProviderApi | None = None,
        logger_provider: LoggerProvider | None = None,
        backlog: Callable[[], float] | None = None,
    ) -> None:
        self._tracer_provider = tracer_provider
        self._logger_provider = logger_provider
        self._backlog = backlog
        self._instruments: tuple[Tracer, Logger] | None = None
        self._safe_point: SafePoint | None = None

    def yield_with(self, safe_point: SafePoint) -> None:
        """Called before each score's span and event: a run's eleven spans and events through
        the SDK are most of its scoring time, longer than the engine should hold the GIL."""
        self._safe_point = safe_point

    def instruments(self) -> tuple[Tracer, Logger]:
        if self._instruments is None:
            tracer = (self._tracer_provider or trace.get_tracer_provider()).get_tracer(OWN_SCOPE, __version__)
            logger = (self._logger_provider or get_logger_provider()).get_logger(OWN_SCOPE, __version__)
            self._instruments = (tracer, logger)
        return self._instruments

    def emit(self, run: AgentRun, scores: Sequence[Score]) -> None:
        tracer, logger = self.instruments()
        context = run_span_context(run)
        events = _events_wanted(logger, context)
        now = time.time_ns()
        safe_point = self._safe_point
        for score in scores:
            if safe_point is not None:
                safe_point()
            emit_evaluation(tracer, events, context, score, evaluation_attributes(run, score), now)

    def emit_conversation(self, conversation: Conversation, scores: Sequence[Score]) -> None:
        """In the trace of the conversation's last run, each span linked to every kept turn's run."""
        tracer, logger = self.instruments()
        context = run_span_context(conversation_run(conversation))
        events = _events_wanted(logger, context)
        links = [Link(span_context) for span_context in turn_links(conversation)]
        now = time.time_ns()
        safe_point = self._safe_point
        for score in scores:
            if safe_point is not None:
                safe_point()
            attributes = conversation_attributes(conversation, score)
            emit_evaluation(tracer, events, context, score, attributes, now, links)

    def flush(self) -> None:
        """Nothing held here: the providers' processors batch."""

    def behind(self) -> bool:
        return self._backlog is not None and self._backlog() > 0.5


def _events_wanted(logger: Logger, context: Context) -> Logger | None:
    """The logger, unless it says no `gen_ai.evaluation.result` event in `context` would go
    anywhere (the Logs API's `enabled`, asked once per run: an SDK logger provider without
    processors, a disabled logger). An event made through the SDK costs about as much as a
    third of its score's span; one nothing receives is not made. A logger of an API without
    `enabled` takes every event."""
    enabled = getattr(logger, "enabled", None)
    if enabled is None or enabled(context=context, event_name=EVALUATION_EVENT):
        return logger
    return None


def emit_evaluation(
    tracer: Tracer,
    logger: Logger | None,
    context: Context,
    score: Score,
    attributes: Mapping[str, Any],
    now_ns: int,
    links: Sequence[Link] | None = None,
) -> None:
    """One score through the SDK: its `evaluate {scorer}` span (a child of `context`'s span,
    timed as the score was) and its `gen_ai.evaluation.result` event (none without `logger`)."""
    start_ns, end_ns = span_timing(score, now_ns)
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
    if logger is not None:
        logger.emit(timestamp=end_ns, context=context, event_name=EVALUATION_EVENT, attributes=attributes)
