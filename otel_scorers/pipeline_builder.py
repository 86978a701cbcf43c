"""One builder for both doors: the processor and the sidecar get their metrics, outputs, engine
(runner and pipeline), conversations and which traces their assembler buffers from
`build_pipeline(PipelineSettings(...))`; they differ only in where spans come from.

Conversations are a second source of work for the same pieces: their scores go through the
engine's `Emission` (every output, console and OTLP included) and are judged on the engine's
runner loop (one event loop for all judge work in a process).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from otel_scorers.conversations.source import Conversations, ConversationSettings
from otel_scorers.emission import Emission, standard_emission
from otel_scorers.environment import MAX_QUEUE_SIZE
from otel_scorers.errors import ConfigError
from otel_scorers.keep.keeper import KeepConfig, RunKeeper
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.pipeline.engine import DEFAULT_MAX_JUDGE_RUNS, ScoringEngine
from otel_scorers.pipeline.judge_instruments import judges_of, observe_judges
from otel_scorers.runs.no_run import RunlessTraces
from otel_scorers.selection.binding import Binding, unique_names
from otel_scorers.selection.sampling import TraceIdSampler

if TYPE_CHECKING:
    from opentelemetry._logs import LoggerProvider
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

    from otel_scorers.labels.agreement_output import ScoreJoin
    from otel_scorers.otlp.score_export import OtlpScoreExport


@dataclass(frozen=True)
class PipelineSettings:
    """What a door says about the pipeline it feeds. `outputs`: names in
    `emission.standard.OUTPUTS` (or `"pkg.module:factory"`), default `otlp` and `metrics`;
    `console` adds `console` (a stream: written there). `keep_conversations` / `send_turns`:
    the conversations' part in this process (None: as `ConversationSettings` says)."""

    bindings: Sequence[Binding]
    conversations: ConversationSettings | None = None
    outputs: Sequence[str] | None = None
    console: bool | TextIO = False
    export: OtlpScoreExport | None = None
    tracer_provider: TracerProvider | None = None
    logger_provider: LoggerProvider | None = None
    meter_provider: MeterProvider | None = None
    provider_backlog: Callable[[], float] | None = None
    max_queue_size: int = MAX_QUEUE_SIZE
    max_judge_runs: int = DEFAULT_MAX_JUDGE_RUNS
    #: False where no agent's thread shares the process (the sidecar): no GIL hand-over.
    yield_to_host: bool = True
    keep_conversations: bool | None = None
    send_turns: bool | None = None
    #: People's labels, joined with the scores of the same runs and conversations: an
    #: `Agreement`, or what carries the scores to the process that holds one.
    agreement: ScoreJoin | None = None
    #: Where the traces of failing (or sampled) runs are kept as a test set (`keep:`).
    keep: KeepConfig | None = None
    metrics: PipelineMetrics | None = field(default=None, compare=False)


@dataclass(frozen=True)
class BuiltPipeline:
    """The pieces both doors run; `engine.runner` hosts the conversations' timer and judging."""

    metrics: PipelineMetrics
    emission: Emission
    engine: ScoringEngine
    conversations: Conversations | None
    #: The widest sampler any binding (or conversation) needs: the traces worth buffering.
    buffered: TraceIdSampler
    #: Traces in which no run was found, counted by their root's scope (`otel_scorers.traces.no_run`).
    runless: RunlessTraces

    def force_flush(self, timeout_s: float) -> bool:
        """Score what was submitted, then the conversations that have ended by now."""
        deadline = time.monotonic() + timeout_s
        flushed = self.engine.force_flush(timeout_s)
        if self.conversations is not None:
            flushed = self.conversations.flush(max(0.0, deadline - time.monotonic())) and flushed
        return flushed

    def shutdown(self, timeout_s: float) -> None:
        """Score what is pending, then the conversations (on the engine's loop, still running),
        then stop the engine: all within `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        if self.conversations is not None:
            self.engine.force_flush(timeout_s / 2)  # the last runs' turns
            self.conversations.shutdown(max(0.1, (deadline - time.monotonic()) * 0.8))
        self.engine.shutdown(max(0.1, deadline - time.monotonic()))


def build_pipeline(settings: PipelineSettings) -> BuiltPipeline:
    """The metrics, outputs, engine and conversations of one pipeline, from one settings object;
    a `ConfigError` when two of its scorers (run or conversation ones) share a name."""
    clashes = unique_names(scorer_names(settings.bindings, settings.conversations))
    if clashes:
        raise ConfigError.combine(clashes)
    metrics = settings.metrics or PipelineMetrics(settings.meter_provider)
    metrics.time_sparsely(binding.name for binding in settings.bindings if binding.lane == "inline")
    emission = build_emission(settings, metrics)
    conversation_scorers = settings.conversations.bindings if settings.conversations is not None else ()
    observe_judges(
        metrics,
        judges_of(
            [*(binding.scorer for binding in settings.bindings), *(b.scorer for b in conversation_scorers)]
        ),
    )
    conversations: Conversations | None = None
    engine = ScoringEngine(
        settings.bindings,
        emission,
        metrics,
        max_queue_size=settings.max_queue_size,
        yield_to_host=settings.yield_to_host,
        max_judge_runs=settings.max_judge_runs,
        # Conversations hear every job's runs, on the engine's thread (made just below).
        on_runs=(lambda runs: conversations.add_runs(runs)) if _has_conversations(settings) else None,  # type: ignore[union-attr]
    )
    if _has_conversations(settings):
        assert settings.conversations is not None
        conversations = Conversations(
            settings.conversations,
            metrics,
            emission,
            settings.logger_provider,
            host=engine.runner,
            keep=settings.keep_conversations,
            send=settings.send_turns,
        )
    return BuiltPipeline(
        metrics,
        emission,
        engine,
        conversations,
        buffered_sampler(settings.bindings, settings.conversations),
        RunlessTraces(metrics),
    )


def build_received_conversations(
    settings: PipelineSettings, metrics: PipelineMetrics, scoring_here: BuiltPipeline | None
) -> Conversations:
    """The conversations a process keeps from the turn records it receives (a sidecar's receiving
    process). With the pipeline that scores runs here, through its emission, on its engine's
    loop (one event loop for all judge work in a process); else with the outputs and agreement
    join `build_pipeline` would give them, their judges observed, on a loop of their own (the
    join's figures are then the door's to show: it holds the join whatever it scores here)."""
    assert settings.conversations is not None
    if scoring_here is not None:
        emission, host = scoring_here.emission, scoring_here.engine.runner
    else:
        emission, host = build_emission(settings, metrics, show_join=False), None
        observe_judges(metrics, judges_of([binding.scorer for binding in settings.conversations.bindings]))
    return Conversations(
        settings.conversations, metrics, emission, settings.logger_provider, host=host, keep=True, send=False
    )


def build_emission(settings: PipelineSettings, metrics: PipelineMetrics, show_join: bool = True) -> Emission:
    """The outputs `settings` name, the agreement join among them when it has one (its figures
    as metrics too, unless not to `show_join`: the door shows them). Every door and command gets
    its outputs here, a backfill's included."""
    emission = standard_emission(
        metrics,
        tracer_provider=settings.tracer_provider,
        logger_provider=settings.logger_provider,
        export=settings.export,
        console=settings.console,
        provider_backlog=settings.provider_backlog,
        outputs=settings.outputs,
    )
    if settings.keep is not None:
        emission = Emission([*emission.outputs, RunKeeper(settings.keep)])
    if settings.agreement is not None:
        emission = with_agreement(emission, settings.agreement, metrics if show_join else None)
    return emission


def scorer_names(
    bindings: Sequence[Binding], conversations: ConversationSettings | None
) -> list[tuple[str, str]]:
    """Where each scorer is (`scorers[i]`, `conversations.scorers[i]`, as a file writes them) and
    its name: the run scorers, then the conversation ones."""
    named = [(f"scorers[{index}]", binding.name) for index, binding in enumerate(bindings)]
    if conversations is not None:
        named += [
            (f"conversations.scorers[{index}]", binding.name)
            for index, binding in enumerate(conversations.bindings)
        ]
    return named


def with_agreement(emission: Emission, join: ScoreJoin, metrics: PipelineMetrics | None) -> Emission:
    """`emission` with the agreement join as one more output, and, given `metrics` and a join
    held in this process (an `Agreement`, not what carries scores to another process), the
    join's figures as metrics."""
    from otel_scorers.labels.agreement_output import AgreementOutput

    if metrics is not None:
        show_agreement(metrics, join)
    return Emission([*emission.outputs, AgreementOutput(join)])


def show_agreement(metrics: PipelineMetrics, join: ScoreJoin) -> None:
    """The join's figures as metrics, where the join is held (an `Agreement`; what carries scores
    to another process has none): by the pipeline that feeds it, or by a door whose scoring runs
    in other processes (the sidecar's receiving process), the one place either registers them."""
    from otel_scorers.labels.agreement import Agreement
    from otel_scorers.labels.agreement_metrics import observe_agreement

    if isinstance(join, Agreement):
        observe_agreement(metrics.meter, join)


def observe_buffered_traces(metrics: PipelineMetrics, count: Callable[[], int]) -> None:
    """`otel_scorers.traces.buffered`: the traces an assembler holds now, either door's."""
    metrics.observe_count(
        "otel_scorers.traces.buffered", "{trace}", "Traces buffered until their runs can be built.", count
    )


def _has_conversations(settings: PipelineSettings) -> bool:
    return _makes_turns(settings.conversations)


def _makes_turns(conversations: ConversationSettings | None) -> bool:
    if conversations is None:
        return False
    return makes_turns(len(conversations.bindings), conversations.turn_records)


def makes_turns(conversation_scorers: int, turn_records: bool) -> bool:
    """Whether runs make conversations' turns: a conversation scorer keeps them, or turn records
    send them (the one statement of it, for the built pipeline and for a file read alone)."""
    return conversation_scorers > 0 or turn_records


def buffered_sampler(
    bindings: Sequence[Binding], conversations: ConversationSettings | None
) -> TraceIdSampler:
    """Which traces an assembler buffers: the bindings' sampler with the lowest threshold; every
    trace when runs make conversations' turns (a run's conversation decides, which its trace id
    does not tell)."""
    return widest_sampler([binding.sampler for binding in bindings], _makes_turns(conversations))


def widest_sampler(samplers: Sequence[TraceIdSampler], makes_turns: bool) -> TraceIdSampler:
    """The sampler with the lowest threshold, keeping what any of `samplers` keeps; every trace
    when runs make conversations' turns."""
    if makes_turns:
        return TraceIdSampler(1.0)
    return min(samplers, key=lambda sampler: sampler.threshold, default=TraceIdSampler(0.0))
