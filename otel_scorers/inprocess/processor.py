"""`ScoringSpanProcessor`: the in-process entry point, a thin adapter onto the pipeline.

    provider.add_span_processor(ScoringSpanProcessor(scorers=[checks.no_tool_errors()]))

On the agent's thread it only buffers span references for traces with an open, samplable run,
and queues the trace when its last open run span ends. With `downstream=`, it also stands in front of the
user's exporting processor: every span is forwarded, and run spans are held until their scores
are attached as attributes (at most `hold_timeout_s`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from opentelemetry import trace
from opentelemetry._logs import get_logger_provider
from opentelemetry.context import Context
from opentelemetry.sdk._logs import LoggerProvider as SdkLoggerProvider
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider

from otel_scorers import environment
from otel_scorers.conventions import ConventionDescription, use_descriptions
from otel_scorers.conversations.source import ConversationSettings
from otel_scorers.emission.attributes import score_attributes
from otel_scorers.emission.hold_queue import HoldQueue
from otel_scorers.inprocess.assembler import TraceAssembler
from otel_scorers.inprocess.buffered_trace import CompletedTrace
from otel_scorers.keep.keeper import KeepConfig
from otel_scorers.labels.agreement import Agreement
from otel_scorers.labels.join_records import Label
from otel_scorers.labels.label_ranges import scoring_ranges
from otel_scorers.model import AgentRun
from otel_scorers.otlp.score_export import OtlpScoreExport, chosen_export
from otel_scorers.pipeline.engine import DEFAULT_MAX_JUDGE_RUNS, ScoredRun
from otel_scorers.pipeline.runner import FLUSH_TIMEOUT_S
from otel_scorers.pipeline_builder import (
    BuiltPipeline,
    PipelineSettings,
    build_pipeline,
    observe_buffered_traces,
)
from otel_scorers.runs.no_run import RunlessTraces, trace_runs
from otel_scorers.scorers.protocol import Scorer
from otel_scorers.selection.binding import Binding, as_binding
from otel_scorers.throttled_log import throttled

if TYPE_CHECKING:
    from opentelemetry._logs import LoggerProvider
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.sdk.trace import Span
    from opentelemetry.trace import TracerProvider

    from otel_scorers.config import Config

logger = logging.getLogger("otel_scorers")

#: How often the engine's thread looks for traces whose handoff was not taken up in time.
HANDOFF_CHECK_INTERVAL_S = 0.5
#: How often the traces whose root ended without a run are counted.
RUNLESS_CHECK_INTERVAL_S = 1.0


def _hold(held: HoldQueue[int, ReadableSpan]) -> Callable[[ReadableSpan], None]:
    """What the assembler calls for a run span that ended (on the agent's thread): hold it."""

    def hold(span: ReadableSpan) -> None:
        held.hold(span.context.span_id, span)

    return hold


def _forward_to(downstream: SpanProcessor) -> Callable[[ReadableSpan, Mapping[str, Any] | None], None]:
    """A released run span goes on downstream, with its score attributes when it has them."""

    def forward(span: ReadableSpan, attributes: Mapping[str, Any] | None) -> None:
        downstream.on_end(_with_attributes(span, attributes) if attributes else span)

    return forward


def _with_attributes(span: ReadableSpan, extra: Mapping[str, Any]) -> ReadableSpan:
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes={**(span.attributes or {}), **extra},
        events=span.events,
        links=span.links,
        kind=span.kind,
        status=span.status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


def _agreement(
    labels: Agreement | bool, bindings: Sequence[Binding], conversations: ConversationSettings | None
) -> Agreement | None:
    """The `Agreement` that takes labels: the one given, a default one for `True`, else none;
    it expects each scorer's labels in the range of that scorer's values."""
    agreement = labels if isinstance(labels, Agreement) else Agreement() if labels else None
    if agreement is not None:
        agreement.expect(scoring_ranges(bindings, conversations))
    return agreement


def _held_for(downstream: SpanProcessor | None, hold_timeout_s: float) -> HoldQueue[int, ReadableSpan] | None:
    """Where run spans wait for their scores before going on `downstream`: only when there is one."""
    return HoldQueue(hold_timeout_s, _forward_to(downstream)) if downstream is not None else None


class _AssembledTraceJob(NamedTuple):
    """The engine's job for a trace whose runs all ended (a NamedTuple: made on the agent's thread)."""

    completed: CompletedTrace
    held: HoldQueue[int, ReadableSpan] | None
    runless: RunlessTraces

    def build(self) -> Sequence[AgentRun]:
        return trace_runs(self.completed.span_records(), self.runless)

    def finished(self, results: Sequence[ScoredRun]) -> None:
        if self.held is None:
            return
        scores_by_run = {run.span_id: scores for run, scores in results}
        for span_id in self.completed.run_span_ids:
            self.held.release(span_id, score_attributes(scores_by_run.get(span_id, ())))

    def dropped(self, reason: str) -> None:
        if self.held is not None:
            for span_id in self.completed.run_span_ids:
                self.held.release(span_id)


class ScoringSpanProcessor(SpanProcessor):
    """Scores agent runs as their spans end, off the agent's thread."""

    def __init__(
        self,
        scorers: Sequence[Binding | Scorer | Callable[[AgentRun], Any]],
        *,
        downstream: SpanProcessor | None = None,
        hold_timeout_s: float | None = None,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        logger_provider: LoggerProvider | None = None,
        export: OtlpScoreExport | bool | None = None,
        max_queue_size: int | None = None,
        max_traces: int | None = None,
        max_spans_per_trace: int | None = None,
        max_judge_runs: int = DEFAULT_MAX_JUDGE_RUNS,
        console: bool | TextIO = False,
        conversations: ConversationSettings | None = None,
        conventions: Sequence[ConventionDescription | Mapping[str, Any]] | None = None,
        outputs: Sequence[str] | None = None,
        labels: Agreement | bool = False,
        keep: KeepConfig | None = None,
    ) -> None:
        """Evaluation spans and events are written as OTLP and sent by `export` (an
        `OtlpScoreExport`; `True`: one configured by the SDK's `OTEL_EXPORTER_OTLP_*` variables),
        or go through the SDK providers (`False`). Left out, they are written as OTLP when
        `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) is set, the cheaper path to the
        same telemetry, else through the providers. Metrics always go through `meter_provider`.
        `console=True` also prints one line per score on standard output (or on the given
        stream), from the scoring thread: a shorthand for `console` among the `outputs`
        (names in `otel_scorers.emission.standard.OUTPUTS`; default `otlp` and `metrics`).
        `conventions` describes instrumentations the shipped readers do not know (the
        `conventions:` section, docs/conventions.md). `labels=True` (or an `Agreement` with its own wait and
        bounds) joins the labels people give (`add_labels`) with the scores of the same runs:
        the judge's agreement with them goes out as metrics (`otel_scorers.agreement.*`).
        `keep` writes failing runs' traces to a file `score` reads (`keep:`, docs/ci.md)."""
        if conventions is not None:
            use_descriptions(conventions)
        # None: the OTEL_SCORERS_* environment variable, else the default (as the SDK's processors do).
        hold_timeout_s = float(environment.resolve("hold_timeout_s", hold_timeout_s))
        max_queue_size = int(environment.resolve("max_queue_size", max_queue_size))
        max_traces = int(environment.resolve("max_traces", max_traces))
        max_spans_per_trace = int(environment.resolve("max_spans_per_trace", max_spans_per_trace))
        self.bindings = tuple(as_binding(item) for item in scorers)  # names checked by the builder
        self._export = chosen_export(export)
        self._tracer_provider = tracer_provider
        self._logger_provider = logger_provider
        self._flushing = threading.local()
        #: The judge's agreement with people, when labels are taken (`add_labels`).
        self.agreement = _agreement(labels, self.bindings, conversations)
        built = self._build_pipeline(
            conversations, outputs, console, meter_provider, max_queue_size, max_judge_runs, keep
        )
        self._built = built
        self.metrics = built.metrics
        self.engine = built.engine
        self.conversations = built.conversations
        self._downstream = downstream
        self._held = _held_for(downstream, hold_timeout_s)
        #: Traces in which no run was found, counted by their root's scope (`no_run`).
        self.runless = built.runless
        self._start(hold_timeout_s, max_traces, max_spans_per_trace)

    def _build_pipeline(
        self,
        conversations: ConversationSettings | None,
        outputs: Sequence[str] | None,
        console: bool | TextIO,
        meter_provider: MeterProvider | None,
        max_queue_size: int,
        max_judge_runs: int,
        keep: KeepConfig | None,
    ) -> BuiltPipeline:
        """The pipeline both doors share, for this processor's bindings, export and providers."""
        return build_pipeline(
            PipelineSettings(
                self.bindings,
                conversations,
                outputs=outputs,
                console=console,
                export=self._export,
                tracer_provider=self._tracer_provider,
                logger_provider=self._logger_provider,
                meter_provider=meter_provider,
                max_queue_size=max_queue_size,
                max_judge_runs=max_judge_runs,
                agreement=self.agreement,
                keep=keep,
            )
        )

    def _start(self, hold_timeout_s: float, max_traces: int, max_spans_per_trace: int) -> None:
        """The assembler in front of the built pipeline (holding run spans for `downstream`), its
        timers on the engine's loop, then the engine."""
        self.assembler = TraceAssembler(
            self._built.buffered.sampled,
            self._trace_completed,
            self.metrics,
            on_run_span_ended=_hold(self._held) if self._held is not None else None,
            max_traces=max_traces,
            max_spans_per_trace=max_spans_per_trace,
            runless=self.runless,
        )
        observe_buffered_traces(self.metrics, lambda: self.assembler.buffered_traces)
        # A trace kept open for the run a handoff passed to is given up on the engine's thread.
        self.engine.call_every(HANDOFF_CHECK_INTERVAL_S, self.assembler.complete_expired)
        # Traces whose root ended with no run in them are counted on the engine's thread.
        self.engine.call_every(RUNLESS_CHECK_INTERVAL_S, self.assembler.count_runless)
        if self._held is not None:
            self.engine.call_every(min(0.1, hold_timeout_s / 4), self._held.release_expired)
        else:
            # Nothing to forward: the SDK calls the assembler directly, one call less per span.
            self.on_start = self.assembler.on_start  # type: ignore[method-assign]
            self.on_end = self.assembler.on_end  # type: ignore[method-assign,assignment]
        self._shut_down = False
        self.engine.start()  # here, so that no agent thread ever starts it

    @classmethod
    def from_config(cls, source: str | Path | Config, **kwargs: Any) -> ScoringSpanProcessor:
        """Build from a YAML file (or a loaded `Config`); keyword arguments as for the constructor."""
        from otel_scorers.config import Config, load_config

        config = source if isinstance(source, Config) else load_config(source)
        options = config.processor_options()
        options.update(kwargs)
        bindings, conversations = config.scoring()  # one judge for runs and conversations
        if conversations is not None:
            options.setdefault("conversations", conversations)
        if config.outputs is not None:
            options.setdefault("outputs", config.outputs)
        options.setdefault("conventions", config.conventions)
        if config.labels is not None:
            options.setdefault("labels", config.labels.agreement())
        if config.keep is not None:
            options.setdefault("keep", config.keep)
        return cls(bindings, **options)

    def add_labels(self, labels: Sequence[Label]) -> None:
        """People's verdicts on runs, joined with the scores of the same runs and scorers (any
        thread; not on a span's hot path). A `ValueError` when labels were not asked for."""
        if self.agreement is None:
            raise ValueError("this processor takes no labels: build it with labels=True (config: labels: {})")
        admitted = self.agreement.add_labels(labels)
        if admitted.refused:
            throttled.warning(
                "label_refused", "otel_scorers: %d labels refused: %s", admitted.refused, admitted.problem
            )

    # The SDK calls these on the agent's thread: they must never raise and never wait.

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.assembler.on_start(span, parent_context)
        if self._downstream is not None:
            self._downstream.on_start(span, parent_context)

    def _on_ending(self, span: Span) -> None:
        if self._downstream is not None:
            self._downstream._on_ending(span)

    def on_end(self, span: ReadableSpan) -> None:
        handed_over = self.assembler.on_end(span)  # a run span is held until its scores are in
        if self._downstream is not None and not handed_over:
            self._downstream.on_end(span)

    def _trace_completed(self, completed: CompletedTrace) -> None:
        self.engine.submit(_AssembledTraceJob(completed, self._held, self.runless))

    def force_flush(self, timeout_millis: int = int(FLUSH_TIMEOUT_S * 1000)) -> bool:
        """Score and emit every run that ended before the call, then flush where the scores went.

        The evaluation spans of the last runs reach the tracer provider's processors during
        this call: a `provider.force_flush()` that had already flushed an exporting processor
        added before this one would return with them still queued. So the providers are flushed
        again from here, once (the provider calls this method back: that call skips them)."""
        deadline = time.monotonic() + timeout_millis / 1000

        def remaining_ms() -> int:
            return max(0, int((deadline - time.monotonic()) * 1000))

        # A trace waiting for a handoff to be taken up has runs that ended: they are scored now.
        self.assembler.complete_waiting()
        self.assembler.count_runless()
        # The runs, then the conversations that have ended by now.
        flushed = self._built.force_flush(timeout_millis / 1000)
        if self._export is not None:
            flushed = self._export.force_flush(remaining_ms()) and flushed
        if self._downstream is not None:
            flushed = self._downstream.force_flush(remaining_ms()) and flushed
        # Through the providers go the evaluation spans when nothing is written as OTLP.
        if self._export is None and not getattr(self._flushing, "providers", False):
            self._flushing.providers = True
            try:
                flushed = self._flush_providers(remaining_ms) and flushed
            finally:
                self._flushing.providers = False
        return flushed

    def _flush_providers(self, remaining_ms: Callable[[], int]) -> bool:
        tracer_provider = self._tracer_provider or trace.get_tracer_provider()
        logger_provider = self._logger_provider or get_logger_provider()
        flushed = True
        if isinstance(tracer_provider, SdkTracerProvider):
            flushed = tracer_provider.force_flush(remaining_ms()) and flushed
        if isinstance(logger_provider, SdkLoggerProvider):
            flushed = logger_provider.force_flush(remaining_ms()) and flushed
        return flushed

    def shutdown(self, timeout_s: float = FLUSH_TIMEOUT_S) -> None:
        if self._shut_down:
            return
        self._shut_down = True
        self.assembler.complete_waiting()
        deadline = time.monotonic() + timeout_s
        self._built.shutdown(timeout_s)
        if self.agreement is not None:  # the labels still waiting will find no score now
            self.agreement.close()
        if self._export is not None:
            self._export.shutdown(max(0.0, deadline - time.monotonic()))
            spans, events = self._export.unsent()
            if spans or events:
                logger.warning(
                    "otel_scorers: could not send %d evaluation spans and %d events to %s by the shutdown deadline",
                    spans,
                    events,
                    self._export.endpoint or "the OTLP endpoint",
                )
        if self._held is not None:
            self._held.release_all()
        if self._downstream is not None:
            self._downstream.shutdown()
