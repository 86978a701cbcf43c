"""The scoring pipeline: what happens to a job's runs, with no thread or queue of its own (a
`Runner` runs it; backfill calls its pure functions alone).

Each run is built, admitted per binding, scored and emitted in lanes that the scorers declare
(`Scorer.lane`): `inline` quick checks on the loop, `async` scorers concurrently with their
timeouts, and the bounded `judge` lane after the run's quick scores are out, so that a slow judge
holds up only judge work.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Protocol

from otel_scorers.emission import Emission
from otel_scorers.fork_safety import renew_in_child
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.model import AgentRun, Score
from otel_scorers.pipeline.scorer_call import error_of, evaluate
from otel_scorers.scorers.protocol import FunctionScorer
from otel_scorers.selection.binding import Binding
from otel_scorers.selection.paced_sampling import Decided
from otel_scorers.throttled_log import throttled

logger = logging.getLogger("otel_scorers")
ScoredRun = tuple[AgentRun, list[Score]]
#: Runs at most in the judge lane (waiting for a judge or being judged) before judge work is dropped.
DEFAULT_MAX_JUDGE_RUNS = 256
#: How long after its last run the pipeline records the histogram measurements it held back.
_METRICS_FLUSH_DELAY_S = 0.25
#: Longest stretch of scoring work between two chances for a host thread to take the GIL: a host
#: thread woken meanwhile waits for the rest of it (docs/performance.md has the figures).
_YIELD_EVERY_S = 0.0002


class HostYield:
    """Hands the GIL to a host thread that wants it, after every fifth of a millisecond of work.

    Scoring is CPU-bound Python. Without a voluntary release, an agent thread that wakes from I/O
    (a model reply, say) while the engine works waits for the interpreter's switch interval (5 ms)
    before it may run: scoring would add latency to the agent. The release is `time.sleep(0)`,
    which leaves the GIL free for as long as the kernel takes to return from a sleep (its timer
    slack, tens of microseconds): long enough for a waiting thread to wake and take it.
    `os.sched_yield()` frees it for a system call's length only: the engine mostly took it back
    before the woken thread could (docs/performance.md has the figures).

    A stretch starts when work resumes after the engine had none (`rest`), so a run scored in
    less than the interval pays no release: the host had the GIL while the engine waited."""

    def __init__(
        self,
        clock: Callable[[], float] = time.perf_counter,
        release: Callable[[float], object] = time.sleep,
    ) -> None:
        self._clock = clock
        self._release = release
        self._since: float | None = None

    def __call__(self) -> None:
        """A safe point: between two units of work, holding nothing another thread needs."""
        now = self._clock()
        if self._since is None:
            self._since = now
        elif now - self._since >= _YIELD_EVERY_S:
            self._release(0)
            self._since = self._clock()

    def rest(self) -> None:
        """The engine has no more work in hand: the next call starts a new stretch."""
        self._since = None


class _KeepGoing:
    """No host thread shares the process (the sidecar): never released on purpose."""

    def __call__(self) -> None:
        pass

    def rest(self) -> None:
        pass


class Job(Protocol):
    """One unit of work: something that yields runs, told when they are scored or dropped."""

    def build(self) -> Sequence[AgentRun]: ...

    def finished(self, results: Sequence[ScoredRun]) -> None: ...

    def dropped(self, reason: str) -> None: ...


class ScoringPipeline:
    """Scores jobs' runs with `bindings` and emits the scores: the `Work` of the engine's runner."""

    def __init__(
        self,
        bindings: Sequence[Binding],
        emission: Emission,
        metrics: PipelineMetrics,
        yield_to_host: bool = True,
        max_judge_runs: int = DEFAULT_MAX_JUDGE_RUNS,
        on_runs: Callable[[Sequence[AgentRun]], None] | None = None,
        queued: Callable[[], int] = lambda: 0,
    ) -> None:
        if max_judge_runs < 1:
            raise ValueError(f"max_judge_runs must be at least 1, got {max_judge_runs}")
        self.bindings = tuple(bindings)
        self._quick = tuple(binding for binding in self.bindings if binding.lane != "judge")
        self._judged = tuple(binding for binding in self.bindings if binding.lane == "judge")
        #: Every binding in the inline lane: a job is scored on the loop, with no task of its own.
        self.synchronous = all(binding.lane == "inline" for binding in self.bindings)
        self._max_judge_runs = max_judge_runs
        self._emission = emission
        self._metrics = metrics
        self._yield: HostYield | _KeepGoing = HostYield() if yield_to_host else _KeepGoing()
        if yield_to_host:
            # Safe points inside emission too: a run's scores through the SDK's providers are
            # most of its scoring time (the sidecar's outputs get none: no call at all there).
            emission.yield_with(self._yield)
        self._on_runs = on_runs
        #: How many jobs wait in the runner's queue (the end of a burst is when none do).
        self.queued = queued
        self._reset()
        threads = {
            binding.name: binding.scorer.threads
            for binding in self.bindings
            if isinstance(binding.scorer, FunctionScorer) and binding.scorer.threads is not None
        }
        if threads:
            metrics.observe_overdue_calls(lambda: {name: each.overdue for name, each in threads.items()})
        paced = {binding.name: binding.paced for binding in self.bindings if binding.paced is not None}
        if paced:
            metrics.observe_capped(
                lambda: {
                    (name, cap): n for name, each in paced.items() for cap, n in each.caps.capped.items()
                }
            )
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._judging: set[asyncio.Task[None]] = set()  # jobs whose runs wait for their judges
        self._judge_runs = 0
        self._flush_scheduled = False

    # ---- the runner's side ----------------------------------------------------------------

    def dropped(self, job: Job, reason: str) -> None:
        job.dropped(reason)
        self._metrics.run_outcome("dropped", reason)

    def behind(self) -> bool:
        """An output lags so far that more scores would be dropped."""
        return self._emission.behind()

    def flush(self) -> None:
        """What the outputs hold back for a batch (histogram measurements), passed on."""
        self._emission.flush()

    def in_flight(self) -> int:
        return len(self._judging)

    def abandoned(self, count: int) -> None:
        self._metrics.run_outcome("dropped", "shutdown", count)
        logger.warning("otel_scorers: shutdown timed out; %d runs were not scored", count)

    def do_now(self, job: Job, done: Callable[[], None]) -> None:
        """Score a job whose bindings are all quick checks (synchronous, never a judge)."""
        results: list[ScoredRun] = []
        self._yield()
        try:
            runs = self._build(job)
            for run in runs:
                self._metrics.run_outcome("assembled")
                scores = score_run_now(self._quick, run, self._metrics.evaluation_outcome)
                self._emission.emit(run, scores)
                self._yield()
                results.append((run, scores))
        finally:
            self._finish(job, results, done)

    async def do(self, job: Job, done: Callable[[], None]) -> None:
        """Build the job's runs, score and emit their quick checks, and hand their judge work to
        the judge lane; the job is done when that is done too."""
        results: list[ScoredRun] = []
        judged: list[tuple[int, asyncio.Task[list[Score]]]] = []  # (index in results, its judging)
        self._yield()
        try:
            runs = self._build(job)
            for run in runs:
                self._metrics.run_outcome("assembled")
                scores = await score_run(self._quick, run, self._metrics.evaluation_outcome)
                self._emission.emit(run, scores)
                self._yield()
                judging = self._judge_lane(run, scores)
                if judging is not None:
                    judged.append((len(results), judging))
                results.append((run, scores))
        except BaseException:
            for _, judging in judged:
                judging.cancel()
            self._finish(job, results, done)
            raise
        if not judged:
            self._finish(job, results, done)
            return
        waiting = asyncio.get_running_loop().create_task(
            self._finish_after_judges(job, results, judged, done)
        )
        self._judging.add(waiting)
        waiting.add_done_callback(self._judging.discard)

    # ---- lanes ----------------------------------------------------------------------------

    def _build(self, job: Job) -> Sequence[AgentRun]:
        """The job's runs; none, counted and logged, when its spans cannot be built into runs."""
        try:
            runs = job.build()
            for run in runs:
                # A built run is read from its spans when first read (`runs.lazy_run`): read
                # here, a run that cannot be read is its trace's build error, as one that
                # cannot be built.
                run.missing  # noqa: B018
        except Exception:
            logger.exception("otel_scorers: could not build runs from a trace; skipping it")
            self._metrics.run_outcome("dropped", "build_error")
            runs = ()
        if self._on_runs is not None and runs:
            try:
                self._on_runs(runs)
            except Exception:
                throttled.warning("on_runs", "otel_scorers: keeping conversation turns failed", exc_info=True)
        self._yield()
        return runs

    def _judge_lane(self, run: AgentRun, checks: Sequence[Score]) -> asyncio.Task[list[Score]] | None:
        """The run's judge work as a task in the judge lane; None when there is none, or when the
        lane is full (then dropped and counted). `checks`, the run's quick scores, weigh in on
        the decisions of budget-paced bindings."""
        admitted = Decided.of(self._judged, run, self._metrics.evaluation_outcome, checks)
        if not admitted.bindings:
            return None
        if self._judge_runs >= self._max_judge_runs:
            admitted.release()
            for binding in admitted.bindings:
                self._metrics.evaluation_outcome(binding.name, "judge_lane_full")
            throttled.warning(
                "judge_lane_full",
                "otel_scorers: %d runs already wait for the judge; dropping judge scores until it catches up",
                self._judge_runs,
            )
            return None
        self._judge_runs += 1
        judging = asyncio.get_running_loop().create_task(self._judge(run, admitted))
        judging.add_done_callback(self._left_judge_lane)
        return judging

    def _left_judge_lane(self, _: asyncio.Task[list[Score]]) -> None:
        self._judge_runs -= 1

    async def _judge(self, run: AgentRun, admitted: Decided[Binding]) -> list[Score]:
        scores = await evaluate_decided(admitted, run)
        self._emission.emit(run, scores)
        return scores

    async def _finish_after_judges(
        self,
        job: Job,
        results: list[ScoredRun],
        judged: list[tuple[int, asyncio.Task[list[Score]]]],
        done: Callable[[], None],
    ) -> None:
        try:
            for index, judging in judged:
                run, scores = results[index]
                with contextlib.suppress(Exception):  # `_judge` turns failures into error scores
                    results[index] = (run, [*scores, *await judging])
        finally:
            self._finish(job, results, done)

    def _flush_later(self) -> None:
        self._flush_scheduled = False
        self.flush()

    def _finish(self, job: Job, results: Sequence[ScoredRun], done: Callable[[], None]) -> None:
        idle = not self.queued()
        if idle:
            self._yield.rest()
        if idle and not self._flush_scheduled:
            # The end of a burst: its held-back measurements are recorded a moment later, so that
            # runs that come one at a time are still recorded in batches (a metric reader's
            # collection records them before it reads, whenever it comes).
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # a task closed outside its loop (at shutdown): record them now
                self._flush_later()
            else:
                self._flush_scheduled = True
                loop.call_later(_METRICS_FLUSH_DELAY_S, self._flush_later)
        try:
            job.finished(results)
        except Exception:
            logger.exception("otel_scorers: job completion callback failed")
        done()


# ---- the pure scoring functions ----------------------------------------------------------------


async def score_run(
    bindings: Sequence[Binding],
    run: AgentRun,
    not_admitted: Callable[[str, str], None] | None = None,
) -> list[Score]:
    """Admit the run per binding and score it with every binding that admits it: synchronous
    scorers inline, asynchronous ones concurrently. `not_admitted(binding, why)` hears the rest.
    Budget-paced bindings decide last, weighing the other bindings' scores (as the engine's
    judge lane weighs the quick checks')."""
    first = [binding for binding in bindings if binding.paced is None]
    if len(first) == len(bindings):  # the usual case: no pacing to decide or settle
        return await evaluate_all(admit_all(bindings, run, not_admitted), run)
    scores = await evaluate_all(admit_all(first, run, not_admitted), run)
    paced = [binding for binding in bindings if binding.paced is not None]
    scores.extend(await evaluate_decided(Decided.of(paced, run, not_admitted, scores), run))
    return scores


def score_run_now(
    bindings: Sequence[Binding],
    run: AgentRun,
    not_admitted: Callable[[str, str], None] | None = None,
) -> list[Score]:
    """`score_run` for bindings whose scorers are all synchronous (quick checks)."""
    scores: list[Score] = []
    for binding in admit_all(bindings, run, not_admitted):
        result = evaluate(binding, run)
        if not isinstance(result, Score):  # a hand-made `Check` around a coroutine function
            close = getattr(result, "close", None)
            if close is not None:
                close()
            result = error_of(binding, TypeError("a quick check returned an awaitable"), 0.0)
        scores.append(result)
    return scores


def admit_all(
    bindings: Sequence[Binding], run: AgentRun, not_admitted: Callable[[str, str], None] | None = None
) -> list[Binding]:
    """The bindings that admit the run (a budget-paced binding's probability and spend need
    `Decided`: quick checks, which this is for, are never paced)."""
    admitted: list[Binding] = []
    for binding in bindings:
        if not binding.screens:  # most quick checks: every run, nothing to decide
            admitted.append(binding)
            continue
        admission = binding.admit(run)
        if admission == "admitted":
            admitted.append(binding)
        elif not_admitted is not None:
            not_admitted(binding.name, admission)
    return admitted


async def evaluate_decided(admitted: Decided[Binding], run: AgentRun) -> list[Score]:
    """`evaluate_all` over the bindings that admitted the run; their pacing decisions are settled
    with the scores (`Decided.settle`), or given back when scoring fails."""
    try:
        scores = await evaluate_all(admitted.bindings, run)
    except BaseException:
        admitted.release()
        raise
    return admitted.settle(scores)


async def evaluate_all(bindings: Sequence[Binding], run: AgentRun) -> list[Score]:
    """Score an admitted run with each binding, the asynchronous ones concurrently."""
    return await gathered(evaluate(binding, run) for binding in bindings)


async def gathered(results: Iterable[Score | Awaitable[Score]]) -> list[Score]:
    """The scores, those still to come awaited together (so judged ones meet in one batch)."""
    scores: list[Score] = []
    waiting: list[Awaitable[Score]] = []
    for result in results:
        if isinstance(result, Score):
            scores.append(result)
        else:
            waiting.append(result)
    if waiting:
        scores.extend(await asyncio.gather(*waiting))
    return scores
