"""Scoring ready traces: the seam between the sidecar's receiving loop and whatever scores.

`ThreadScoring` scores on a `ScoringEngine` thread in this process; `ProcessScoring`
(`worker_pool.py`) in child processes. Either way a finished trace comes back as the score
attributes of each of its runs, which is all the receiving side needs (inline mode attaches them
to the held run spans).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from otel_scorers.conversations.pipeline import Conversations, ConversationSettings
from otel_scorers.emission import standard_emission
from otel_scorers.emission.attributes import score_attributes
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.model import AgentRun, Score
from otel_scorers.pipeline.engine import DEFAULT_MAX_JUDGE_RUNS, ScoredRun, ScoringEngine
from otel_scorers.runs.ancestry import nearest_marked
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.selection.binding import Binding
from otel_scorers.sidecar.batch_assembler import BufferedTrace
from otel_scorers.sidecar.hold import span_key
from otel_scorers.sidecar.otlp_spans import OtlpSpan
from otel_scorers.sidecar.telemetry import Telemetry

#: One scored run: its span's key (trace id + span id, 24 bytes), its score attributes, for each
#: score with an evaluator version or an inclusion probability below 1 (scorer, version,
#: probability), and the run's conversation id: what the agreement join in the receiving process
#: keys and weights scores by.
RunScores = tuple[bytes, dict[str, Any], tuple[tuple[str, str, float], ...], str | None]
#: Called once per trace, with its scored runs, or None when it was dropped. Any thread.
Done = Callable[[BufferedTrace, "Sequence[RunScores] | None"], None]


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


def scoring_conversations(
    settings: ConversationSettings | None, telemetry: Telemetry, metrics: PipelineMetrics
) -> Conversations | None:
    """The scoring side's part in conversations. With `turn_records`, each run rebuilt goes out as
    a turn record, for the sidecar the Collector routes its conversation to (which keeps it: see
    `Sidecar.conversations`); without, the conversations are kept and scored here, from the traces
    this sidecar receives (one sidecar, or replicas each getting whole conversations)."""
    if settings is None:
        return None
    providers = (telemetry.tracer_provider, telemetry.logger_provider)
    if settings.turn_records:
        return Conversations(settings, metrics, *providers, keep=False, send=True)
    if settings.bindings:
        return Conversations(settings, metrics, *providers, keep=True, send=False)
    return None


def sidecar_engine(
    bindings: Sequence[Binding],
    telemetry: Telemetry,
    metrics: PipelineMetrics,
    max_queue_size: int,
    console: bool,
    conversations: Conversations | None,
) -> ScoringEngine:
    """The engine that scores for the sidecar, in whichever process, exporting through `telemetry`
    (and with `console`, printing a line per score on standard output); the runs it rebuilds go
    to `conversations` too."""
    emission = standard_emission(
        metrics,
        tracer_provider=telemetry.tracer_provider,
        logger_provider=telemetry.logger_provider,
        export=telemetry.scores,
        console=console,
        provider_backlog=telemetry.provider_backlog,
    )
    # No agent shares the process: the engine need not hand the GIL over between steps.
    return ScoringEngine(
        bindings,
        emission,
        metrics,
        max_queue_size=max_queue_size,
        yield_to_host=False,
        # Traces waiting for a judge count among those in flight: at most half of them may, so
        # the quick checks of the rest keep being dispatched however slow the judge is.
        max_judge_runs=max(1, min(DEFAULT_MAX_JUDGE_RUNS, max_queue_size // 2)),
        on_runs=conversations.observe if conversations is not None else None,
    )


def run_scores(results: Sequence[ScoredRun]) -> list[RunScores]:
    return [
        (
            span_key(run.trace_id, run.span_id),
            score_attributes(scores),
            score_facts(scores),
            run.conversation_id,
        )
        for run, scores in results
    ]


def score_facts(scores: Sequence[Score]) -> tuple[tuple[str, str, float], ...]:
    facts = []
    for score in scores:
        version = getattr(score, "evaluator_version", None) or ""
        probability = score.sampling_probability
        if version or (probability is not None and probability < 1.0):
            facts.append((score.scorer, version, probability if probability is not None else 1.0))
    return tuple(facts)


def run_subtrees(spans: Sequence[OtlpSpan], run_spans: Sequence[OtlpSpan]) -> list[OtlpSpan]:
    """The run spans and their descendants: the only spans a run is built from. Reads ids only."""
    runs: dict[bytes, bool] = {item.span.span_id: True for item in run_spans}
    # An empty parent id is a root's: the walk ends there.
    parents = {item.span.span_id: item.span.parent_span_id or None for item in spans}
    inside: dict[bytes, bool | None] = {}
    return [item for item in spans if nearest_marked(item.span.span_id, parents, runs, inside)]


def build_trace_runs(spans: Sequence[OtlpSpan]) -> list[AgentRun]:
    return build_runs([item.record() for item in spans])


@dataclass(frozen=True, slots=True)
class TraceJob:
    """A ready trace as a job for the `ScoringEngine`: converted to `SpanRecord`s on its thread."""

    trace: BufferedTrace
    done: Done

    def build(self) -> Sequence[AgentRun]:
        return build_trace_runs(run_subtrees(self.trace.spans, self.trace.run_spans))

    def finished(self, results: Sequence[ScoredRun]) -> None:
        self.done(self.trace, run_scores(results))

    def dropped(self, reason: str) -> None:
        self.done(self.trace, None)


class ThreadScoring:
    """Scoring on the engine's thread, in this process (shares the GIL with the receivers)."""

    def __init__(
        self,
        engine: ScoringEngine,
        done: Done,
        prometheus_text: Callable[[], bytes],
        conversations: Conversations | None = None,
    ) -> None:
        self.engine = engine
        self.conversations = conversations
        self._done = done
        self._prometheus_text = prometheus_text

    async def start(self) -> None:
        self.engine.start()

    def submit(self, trace: BufferedTrace) -> None:
        self.engine.submit(TraceJob(trace, self._done))

    def shutdown(self, timeout_s: float, flush_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        self.engine.shutdown(timeout_s)  # the sidecar flushes the telemetry it shares
        if self.conversations is not None:  # the runs scored last are among their turns
            self.conversations.shutdown(max(0.1, deadline - time.monotonic()))

    async def prometheus_text(self) -> bytes:
        return self._prometheus_text()
