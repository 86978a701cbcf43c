"""Scoring ready traces: the seam between the sidecar's receiving loop and whatever scores.

`ThreadScoring` scores on a `ScoringEngine` thread in this process; `ProcessScoring`
(`worker_pool.py`) in child processes. Either way a finished trace comes back as the score
attributes of each of its runs, which is all the receiving side needs (inline mode attaches them
to the held run spans).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from otel_scorers.config import Config, SidecarConfig
from otel_scorers.conversations.source import Conversations
from otel_scorers.emission.attributes import score_attributes
from otel_scorers.labels.agreement import Agreement
from otel_scorers.labels.agreement_output import ScoreJoin
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.model import AgentRun
from otel_scorers.otlp.telemetry import Telemetry
from otel_scorers.pipeline.engine import DEFAULT_MAX_JUDGE_RUNS, ScoredRun
from otel_scorers.pipeline_builder import (
    BuiltPipeline,
    PipelineSettings,
    build_pipeline,
    build_received_conversations,
)
from otel_scorers.runs.ancestry import nearest_marked
from otel_scorers.runs.call_chains import CallChains
from otel_scorers.runs.no_run import RunlessTraces, trace_runs
from otel_scorers.runs.span_roles import span_roles
from otel_scorers.sidecar.batch_assembler import BufferedTrace
from otel_scorers.sidecar.hold import span_key
from otel_scorers.sidecar.otlp_spans import OtlpSpan, trace_records

#: One scored run: its span's key (trace id + span id, 24 bytes) and its score attributes (what
#: inline mode attaches to the held run span). The agreement join hears the scores themselves
#: through the pipeline's `AgreementOutput`.
RunSpanAttributes = tuple[bytes, dict[str, Any]]
#: Called once per trace, with its scored runs, or None when it was dropped. Any thread.
Done = Callable[[BufferedTrace, "Sequence[RunSpanAttributes] | None"], None]


class Scoring(Protocol):
    async def start(self) -> None:
        """Get ready to score; the receivers start after this."""
        ...

    def submit(self, trace: BufferedTrace) -> None:
        """Score a ready trace without blocking; `Done` is called when it is scored or dropped."""
        ...

    def shutdown(self, timeout_s: float, flush_s: float) -> None:
        """Finish what was submitted within `timeout_s` (counting the rest), then stop; exports
        of a scoring side with its own telemetry are flushed within `flush_s` more."""
        ...

    async def prometheus_text(self) -> bytes:
        """The scoring side's metrics in Prometheus text format."""
        ...


def sidecar_pipeline(
    config: Config, telemetry: Telemetry, metrics: PipelineMetrics, join: ScoreJoin | None = None
) -> BuiltPipeline:
    """The pipeline that scores for the sidecar, in whichever process, exporting through
    `telemetry`. With `turn_records`, each run rebuilt goes out as a turn record, for the sidecar
    the Collector routes its conversation to (which keeps it: `receiving_conversations`); without,
    the conversations are kept and scored here, from the traces this sidecar receives. Run and
    conversation scores go to `join` (the receiving process's agreement, or what carries them
    there)."""
    settings = config.sidecar
    bindings, conversations = config.scoring()  # one judge for runs and conversations
    turn_records = conversations is not None and conversations.turn_records
    return build_pipeline(
        PipelineSettings(
            bindings,
            conversations,
            outputs=config.outputs,
            console=settings.console,
            keep=config.keep,
            export=telemetry.scores,
            tracer_provider=telemetry.tracer_provider,
            logger_provider=telemetry.logger_provider,
            provider_backlog=telemetry.provider_backlog,
            max_queue_size=settings.max_runs_in_flight,
            # Traces waiting for a judge count among those in flight: at most half of them may,
            # so the quick checks of the rest keep being dispatched however slow the judge is.
            max_judge_runs=max(1, min(DEFAULT_MAX_JUDGE_RUNS, settings.max_runs_in_flight // 2)),
            # No agent shares the process: the engine need not hand the GIL over between steps.
            yield_to_host=False,
            keep_conversations=not turn_records,
            send_turns=turn_records,
            agreement=join,
            metrics=metrics,
        )
    )


def receiving_conversations(
    config: Config,
    telemetry: Telemetry,
    metrics: PipelineMetrics,
    scoring_here: BuiltPipeline | None,
    agreement: Agreement | None = None,
) -> Conversations | None:
    """The conversations the Collector routes here as turn records (`/v1/logs`), with `turn_records`
    and conversation scorers, built by the builder (`build_received_conversations`): on the
    scoring pipeline when it runs in this process, else with outputs of their own (the only
    judge work of this process)."""
    here = scoring_here.conversations if scoring_here is not None else None
    section = config.conversations
    if here is None and not (section is not None and section.turn_records and section.scorers):
        return None  # nothing to score here: no judge made
    # The scoring side's own settings where it runs here: its judge is the run scorers' too;
    # else this process's one judge.
    settings = here.settings if here is not None else config.scoring().conversations
    if settings is None or not (settings.turn_records and settings.bindings):
        return None
    return build_received_conversations(
        PipelineSettings(
            (),
            settings,
            outputs=config.outputs,
            console=config.sidecar.console,
            export=telemetry.scores,
            tracer_provider=telemetry.tracer_provider,
            logger_provider=telemetry.logger_provider,
            provider_backlog=telemetry.provider_backlog,
            agreement=agreement,
        ),
        metrics,
        scoring_here,
    )


def run_span_attributes(results: Sequence[ScoredRun]) -> list[RunSpanAttributes]:
    return [(span_key(run.trace_id, run.span_id), score_attributes(scores)) for run, scores in results]


def run_subtrees(spans: Sequence[OtlpSpan], run_spans: Sequence[OtlpSpan]) -> list[OtlpSpan]:
    """The run spans and their descendants: the only spans a run is built from. Reads ids only."""
    runs: dict[bytes, bool] = {item.span.span_id: True for item in run_spans}
    # Each span's ids read once. An empty parent id is a root's: the walk ends there.
    ids = [(span.span_id, span.parent_span_id or None) for span in [item.span for item in spans]]
    parents = dict(ids)
    inside: dict[bytes, bool | None] = {}
    # A run span, and a span directly in one (most of a run's), is kept without a walk up.
    return [
        item
        for item, (span_id, parent) in zip(spans, ids, strict=True)
        if span_id in runs or parent in runs or nearest_marked(span_id, parents, runs, inside)
    ]


def build_trace_runs(
    spans: Sequence[OtlpSpan], runless: RunlessTraces | None = None, chains: CallChains | None = None
) -> list[AgentRun]:
    """The runs in a trace's spans; a trace that gives none is counted in `runless`. With
    `chains`, the model calls of a trace without a run join the runs no span marks, and the runs
    of the chains they complete (of this trace or earlier ones) are returned."""
    records = trace_records(spans)
    if chains is None:
        return trace_runs(records, runless)
    runs = trace_runs(records, None)
    if runs:
        return runs
    joined = list(chains.add(span_roles(records)))
    if not joined and runless is not None:
        runless.add_trace(records)
    return joined


def join_chains(settings: SidecarConfig, metrics: PipelineMetrics) -> CallChains | None:
    """Where the runs no span marks are joined, as the sidecar's settings say (`call_chains`);
    chains not read whole are counted as runs dropped, by reason."""
    if not settings.join_calls:
        return None
    return CallChains(
        settings.join_max_chains,
        int(settings.join_window_s * 1e9),
        on_dropped=lambda reason: metrics.run_outcome("dropped", reason),
        max_bytes=settings.join_max_bytes,
    )


def job_spans(trace: BufferedTrace) -> list[OtlpSpan]:
    """The spans a trace's runs are built from: its run spans' subtrees, or every span of a trace
    without a run span (its model calls may join a run no span marks)."""
    return run_subtrees(trace.spans, trace.run_spans) if trace.run_spans else trace.spans


@dataclass(slots=True, eq=False)
class TraceJob:
    """A ready trace as a job for the `ScoringEngine`: converted to `SpanRecord`s on its thread.
    Not frozen, as `worker_process`'s received jobs: one is made for every trace scored."""

    trace: BufferedTrace
    done: Done
    runless: RunlessTraces | None = None
    chains: CallChains | None = None

    def build(self) -> Sequence[AgentRun]:
        return build_trace_runs(job_spans(self.trace), self.runless, self.chains)

    def finished(self, results: Sequence[ScoredRun]) -> None:
        self.done(self.trace, run_span_attributes(results))

    def dropped(self, reason: str) -> None:
        self.done(self.trace, None)


class ThreadScoring:
    """Scoring on the engine's thread, in this process (shares the GIL with the receivers)."""

    def __init__(
        self,
        built: BuiltPipeline,
        done: Done,
        prometheus_text: Callable[[], bytes],
        chains: CallChains | None = None,
    ) -> None:
        """`chains`: where runs no span marks are joined, on the engine's thread (one at a time)."""
        self.built = built
        self.engine = built.engine
        self._runless = built.runless
        self.chains = chains
        self._done = done
        self._prometheus_text = prometheus_text

    async def start(self) -> None:
        self.engine.start()

    def submit(self, trace: BufferedTrace) -> None:
        self.engine.submit(TraceJob(trace, self._done, self._runless, self.chains))

    def shutdown(self, timeout_s: float, flush_s: float) -> None:
        # The runs, then their conversations; the sidecar flushes the telemetry it shares.
        self.built.shutdown(timeout_s)

    async def prometheus_text(self) -> bytes:
        return self._prometheus_text()
