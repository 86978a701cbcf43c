"""The scoring engine: the scoring pipeline on a runner, as the processor and the sidecar start it.

The runner (`otel_scorers.pipeline.runner`) owns the queue, the thread and its loop, fork renewal, flush,
shutdown and timers; the pipeline (`otel_scorers.pipeline.scoring_pipeline`) builds each job's runs, scores them in
their lanes and emits the scores.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from otel_scorers.emission import Emission
from otel_scorers.environment import MAX_QUEUE_SIZE
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.model import AgentRun
from otel_scorers.pipeline.runner import FLUSH_TIMEOUT_S, Runner
from otel_scorers.pipeline.scoring_pipeline import DEFAULT_MAX_JUDGE_RUNS, Job, ScoredRun, ScoringPipeline
from otel_scorers.selection.binding import Binding

__all__ = ["DEFAULT_MAX_JUDGE_RUNS", "Job", "ScoredRun", "ScoringEngine"]


class ScoringEngine:
    def __init__(
        self,
        bindings: Sequence[Binding],
        emission: Emission,
        metrics: PipelineMetrics,
        max_queue_size: int = MAX_QUEUE_SIZE,
        max_concurrent_runs: int = 64,
        yield_to_host: bool = True,
        max_judge_runs: int = DEFAULT_MAX_JUDGE_RUNS,
        on_runs: Callable[[Sequence[AgentRun]], None] | None = None,
    ) -> None:
        """`on_runs(runs)` hears every job's runs as soon as they are built, before any scoring
        (the conversation stage keeps their turns).
        `yield_to_host=False` where no host thread shares the process (the sidecar): each
        yield costs a context switch, worth it only when an agent's thread may be waiting.
        While an output of `emission` is behind, the engine waits (up to a few seconds) before
        its next run: scores emitted faster than the exporters send them would be dropped.

        Judge bindings (`Binding.lane == "judge"`) are scored in their own lane, after the run's
        quick checks are emitted and without holding one of the `max_concurrent_runs` slots: a
        slow judge holds up only judge work. At most `max_judge_runs` runs are in that lane;
        judge work for more is dropped and counted (`otel_scorers.evaluations` with outcome
        `judge_lane_full`), never queued without bound nor pushed back to the producer."""
        self.pipeline = ScoringPipeline(bindings, emission, metrics, yield_to_host, max_judge_runs, on_runs)
        self.runner: Runner[Job] = Runner(self.pipeline, max_queue_size, max_concurrent_runs)
        self.pipeline.queued = lambda: self.runner.queue_depth
        self.bindings = self.pipeline.bindings
        metrics.observe_queue(lambda: self.runner.queue_depth, max_queue_size)

    def submit(self, job: Job) -> bool:
        """Queue a job without blocking. False (and the job told why) when full or shut down."""
        return self.runner.submit(job)

    def start(self) -> None:
        self.runner.start()

    def call_every(self, interval_s: float, callback: Callable[[], None]) -> None:
        """Run `callback` on the engine's loop every `interval_s` (hold-mode timeouts, say)."""
        self.runner.call_every(interval_s, callback)

    @property
    def queue_depth(self) -> int:
        return self.runner.queue_depth

    def force_flush(self, timeout_s: float = FLUSH_TIMEOUT_S) -> bool:
        """Wait until every job submitted so far is scored and emitted. False on timeout."""
        return self.runner.force_flush(timeout_s)

    def shutdown(self, timeout_s: float = FLUSH_TIMEOUT_S) -> None:
        """Stop accepting work, finish what is pending within the timeout, count the rest."""
        self.runner.shutdown(timeout_s)
