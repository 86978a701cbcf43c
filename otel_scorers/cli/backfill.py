"""`otel-scorers score`: score the runs of OTLP/JSON files at the judge's speed.

Runs are scored concurrently, at most `concurrency` at a time (the judge's, so the judge is kept
busy without queueing more than it serves), and their scores are written as they finish. On a
terminal, a progress line counts the runs and scores. With an OTLP endpoint, the scores also go
out as telemetry, through the same outputs as live scoring: evaluation spans in the runs' own
traces, `gen_ai.evaluation.result` events and metrics, so yesterday's traces get their scores
in Jaeger and Prometheus too.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TextIO

from otel_scorers.conversation_turns import Conversation
from otel_scorers.human_text import counted
from otel_scorers.model import AgentRun, Score
from otel_scorers.pipeline.runner import FLUSH_TIMEOUT_S
from otel_scorers.pipeline.scoring_pipeline import score_run
from otel_scorers.selection.binding import Binding
from otel_scorers.selection.paced_sampling import PacedSampler

DEFAULT_CONCURRENCY = 8
#: A backfill's metrics go out once a minute, and once more when it closes.
BACKFILL_METRIC_INTERVAL_S = 60.0


@dataclass
class Progress:
    """A progress line on a terminal (nothing otherwise), at most ten times a second."""

    out: TextIO = field(default_factory=lambda: sys.stderr)
    runs: int = 0
    scores: int = 0
    started: float = field(default_factory=time.monotonic)
    _shown: float = 0.0

    @property
    def live(self) -> bool:
        return bool(getattr(self.out, "isatty", lambda: False)())

    def add(self, scores: int) -> None:
        self.runs += 1
        self.scores += scores
        now = time.monotonic()
        if self.live and now - self._shown >= 0.1:
            self._shown = now
            self.out.write(
                f"\rotel-scorers: scored {counted(self.runs, 'run')}, {counted(self.scores, 'score')} ({now - self.started:.1f}s)"
            )
            self.out.flush()

    def done(self) -> None:
        """Clear the progress line: the summary that follows says the same, terminal or not."""
        if self.live:
            self.out.write("\r\x1b[K")
            self.out.flush()


async def score_runs(
    bindings: Sequence[Binding],
    runs: Iterable[AgentRun],
    write: Callable[[AgentRun, Score], None],
    concurrency: int = DEFAULT_CONCURRENCY,
    emit: Callable[[AgentRun, Sequence[Score]], None] | None = None,
    progress: Progress | None = None,
    not_admitted: Callable[[str, str], None] | None = None,
) -> int:
    """Score every run, at most `concurrency` at once; the number of runs scored. Runs are
    drawn from `runs` only as slots free up, so memory stays bounded whatever the input.
    Budget-paced bindings pace by the traces' own time (`TraceTime`); `not_admitted(binding,
    why)` hears each run a binding did not score (`filtered`, `sampled_out`, `rate_limited`).

    This loop stays beside the builder's engine, and calls what the engine calls (`score_run`:
    admission, the lanes, each scorer's call): the engine scores live traffic for a host, from a
    bounded queue that drops what it cannot take when the judge falls behind, while a backfill
    must score every run of its files that its bindings admit, as fast as the judge serves and
    no faster, on the traces' own clock. What it scores with comes from the same places as the
    engine's: the bindings and their one judge from `Config.scoring()`, the outputs from the
    builder (`TelemetryOut`)."""
    clock = TraceTime()
    runs = iter(runs)
    first = next(runs, None)
    if first is not None:  # the pacing starts at the first run's time
        clock.saw(first)
        runs = itertools.chain([first], runs)
    bindings = paced_by_trace_time(bindings, clock)
    slots = asyncio.Semaphore(concurrency)
    pending: set[asyncio.Task[None]] = set()
    count = 0

    async def one(run: AgentRun) -> None:
        try:
            clock.saw(run)
            scores = await score_run(bindings, run, not_admitted)
            for score in scores:
                write(run, score)
            if emit is not None:
                emit(run, scores)
            if progress is not None:
                progress.add(len(scores))
        finally:
            slots.release()

    for run in runs:
        await slots.acquire()
        count += 1
        task = asyncio.create_task(one(run))
        pending.add(task)
        task.add_done_callback(pending.discard)
    if pending:
        await asyncio.gather(*pending)
    if progress is not None:
        progress.done()
    return count


class TraceTime:
    """A clock that reads the traces' own time: the latest end of a run scored so far, in seconds.
    Budget-paced sampling in a backfill paces by it, so that yesterday's traces are judged at the
    budget's pace over the hours they span, not over the seconds a backfill takes to read them."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def saw(self, run: AgentRun) -> None:
        seen = (run.end_ns or run.start_ns) / 1e9
        self.first = seen if self.first is None else min(self.first, seen)
        self.now = max(self.now, seen)

    @property
    def span_s(self) -> float:
        """The traces' time from the first run's end to the latest's."""
        return self.now - self.first if self.first is not None else 0.0


def paced_by_trace_time(bindings: Sequence[Binding], clock: TraceTime) -> list[Binding]:
    """The bindings, each budget-paced one with a fresh pacing on `clock` (the others as they are)."""
    return [
        replace(binding, paced=PacedSampler(replace(binding.paced.policy, clock=clock)))
        if binding.paced is not None
        else binding
        for binding in bindings
    ]


def judge_concurrency(bindings: Sequence[Binding]) -> int:
    """The concurrency of the judge the bindings use (the largest, if several), else the default."""
    found = [
        scorer.judge.config.concurrency
        for scorer in (binding.scorer for binding in bindings)
        if hasattr(scorer, "judge") and hasattr(scorer.judge, "config")
    ]
    return max(found) if found else DEFAULT_CONCURRENCY


class TelemetryOut:
    """The scores of a backfill as OTLP telemetry: the live pipeline's outputs (made by the
    builder) over the providers and exporters built from `endpoint` (`build_telemetry`).
    `close()` flushes and says what was sent."""

    def __init__(self, endpoint: str, protocol: str) -> None:
        from otel_scorers.metrics import PipelineMetrics
        from otel_scorers.otlp.endpoint import EXPORT_TIMEOUT_S
        from otel_scorers.otlp.exporters import ExportConfig
        from otel_scorers.otlp.telemetry import build_telemetry
        from otel_scorers.pipeline_builder import PipelineSettings, build_emission

        self.endpoint, self.protocol = endpoint, protocol
        settings = ExportConfig(
            endpoint=endpoint,
            protocol=protocol,  # type: ignore[arg-type]  # the parser's choices are the protocols
            timeout_s=EXPORT_TIMEOUT_S,
            metric_interval_s=BACKFILL_METRIC_INTERVAL_S,
        )
        # What it sent is said once at the end, counted by the providers' exporters: refusals
        # count as not sent, and the scores go through the providers to be counted there.
        self.telemetry = build_telemetry(settings, watch_refusals=False, written_scores=False)
        self.emission = build_emission(
            PipelineSettings(
                (),
                tracer_provider=self.telemetry.tracer_provider,
                logger_provider=self.telemetry.logger_provider,
            ),
            PipelineMetrics(self.telemetry.meter_provider),
        )
        #: Scores handed to the outputs: an evaluation span and an event each.
        self.emitted = 0

    def emit(self, run: AgentRun, scores: Sequence[Score]) -> None:
        self.emitted += len(scores)
        self.emission.emit(run, scores)

    def emit_conversation(self, conversation: Conversation, scores: Sequence[Score]) -> None:
        self.emitted += len(scores)
        self.emission.emit_conversation(conversation, scores)

    def close(self, timeout_s: float = FLUSH_TIMEOUT_S) -> str:
        """Send what is left and stop within `timeout_s` whatever the endpoint does (the SDK's
        flush and retries keep no deadline: `Telemetry.shutdown` gives them up at it); say what
        was sent and what was not."""
        self.telemetry.shutdown(timeout_s, report=False)
        assert self.telemetry.exporters is not None  # an endpoint is given: it exports
        spans, logs, _ = self.telemetry.exporters
        unsent = max(0, self.emitted - spans.sent) + max(0, self.emitted - logs.sent)
        what = f"{counted(spans.sent, 'evaluation span')} and {counted(logs.sent, 'event')}"
        if unsent:
            return (
                f"sent {what} over OTLP ({self.protocol}) to {self.endpoint}; "
                f"{unsent} evaluation spans and events were not sent"
            )
        return f"sent {what}, and the metrics, over OTLP ({self.protocol}) to {self.endpoint}"
