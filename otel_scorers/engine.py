"""The scoring engine: an asyncio loop on a daemon thread that builds runs, scores and emits.

`submit()` is what the producer's thread pays: an append to a bounded deque (full: drop and
count) and, only when the loop sleeps, a wake-up. Everything else happens on the loop: building
the `AgentRun`s, admitting them per binding, running the scorers (sync ones inline, async ones
concurrently with their timeouts), emitting the scores, then telling the job it is done.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Protocol

from opentelemetry import context as otel_context

from otel_scorers.binding import Binding
from otel_scorers.emitter import Emitter
from otel_scorers.fork_safety import renew_in_child, restart_in_child
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.model import AgentRun, Score
from otel_scorers.paced_sampling import Decision
from otel_scorers.scorers.checks import Check
from otel_scorers.scorers.protocol import FunctionScorer
from otel_scorers.throttled_log import throttled

logger = logging.getLogger("otel_scorers")
ScoredRun = tuple[AgentRun, list[Score]]
#: A binding that admitted a run, with its pacing's decision (paced bindings only).
Admitted = tuple[Binding, Decision | None]
#: Runs at most in the judge lane (waiting for a judge or being judged) before judge work is dropped.
DEFAULT_MAX_JUDGE_RUNS = 256


_YIELD_EVERY_S = 0.0005
#: Jobs scored inline (quick checks only) between two turns of the engine's loop.
_INLINE_JOBS_PER_TURN = 8
#: How long after its last run the engine records the histogram measurements it held back.
_METRICS_FLUSH_DELAY_S = 0.25
#: Longest the engine waits for exporters that fell behind before it scores the next run.
_MAX_EXPORT_WAIT_S = 5.0
_last_yield = 0.0


# sched_yield releases the GIL for a syscall's length; sleep(0) would also wait out the kernel's
# timer slack (tens of microseconds) on every call.
_release_gil: Callable[[], object] = getattr(os, "sched_yield", lambda: time.sleep(0))


def _let_the_host_run() -> None:
    """Hand the GIL to a host thread that wants it, at most every half millisecond of work.

    The engine's work is CPU-bound Python. Without a voluntary release, an agent thread that
    wakes from I/O (a model reply, say) waits for the interpreter's switch interval (5 ms) before
    it may run: scoring would add latency to the agent. Releasing after every small step would
    cost a switch each time, so it is rationed."""
    global _last_yield
    now = time.perf_counter()
    if now - _last_yield >= _YIELD_EVERY_S:
        _last_yield = now
        _release_gil()


def _keep_going() -> None:
    pass


def untraced_context() -> otel_context.Context:
    """The current context with OpenTelemetry instrumentation suppressed, by the SDK's own keys:
    the ones instrumentations read (the HTTP one too, for HTTP client instrumentations)."""
    context = otel_context.set_value(otel_context._SUPPRESS_INSTRUMENTATION_KEY, True)
    return otel_context.set_value(otel_context._SUPPRESS_HTTP_INSTRUMENTATION_KEY, True, context)


class Job(Protocol):
    """One unit of work: something that yields runs, told when they are scored or dropped."""

    def build(self) -> Sequence[AgentRun]: ...

    def finished(self, results: Sequence[ScoredRun]) -> None: ...

    def dropped(self, reason: str) -> None: ...


class ScoringEngine:
    def __init__(
        self,
        bindings: Sequence[Binding],
        emitter: Emitter,
        metrics: PipelineMetrics,
        max_queue_size: int = 2048,
        max_concurrent_runs: int = 64,
        yield_to_host: bool = True,
        exports_behind: Callable[[], bool] | None = None,
        max_judge_runs: int = DEFAULT_MAX_JUDGE_RUNS,
        on_runs: Callable[[Sequence[AgentRun]], None] | None = None,
    ) -> None:
        """`on_runs(runs)` hears every job's runs as soon as they are built, before any scoring
        (the conversation stage keeps their turns).
        `yield_to_host=False` where no host thread shares the process (the sidecar): each
        yield costs a context switch, worth it only when an agent's thread may be waiting.
        `exports_behind()` true makes the engine wait (up to a few seconds) before its next run:
        scores emitted faster than the exporters send them would be dropped by the SDK.

        Judge bindings (`Binding.uses_judge`) are scored in their own lane, after the run's
        quick checks are emitted and without holding one of the `max_concurrent_runs` slots: a
        slow judge holds up only judge work. At most `max_judge_runs` runs are in that lane;
        judge work for more is dropped and counted (`otel_scorers.evaluations` with outcome
        `judge_lane_full`), never queued without bound nor pushed back to the producer."""
        if max_queue_size < 1:
            raise ValueError(f"max_queue_size must be at least 1, got {max_queue_size}")
        if max_judge_runs < 1:
            raise ValueError(f"max_judge_runs must be at least 1, got {max_judge_runs}")
        self.bindings = tuple(bindings)
        self._quick = tuple(binding for binding in self.bindings if not binding.uses_judge)
        #: Every binding a quick check (`Check.score` returns a `Score`, synchronously).
        self._inline = all(
            isinstance(binding.scorer, Check) and not binding.uses_judge for binding in self.bindings
        )
        self._judged = tuple(binding for binding in self.bindings if binding.uses_judge)
        self._max_judge_runs = max_judge_runs
        self._emitter = emitter
        self._metrics = metrics
        self._max_queue_size = max_queue_size
        self._max_concurrent_runs = max_concurrent_runs
        self._yield: Callable[[], None] = _let_the_host_run if yield_to_host else _keep_going
        self._exports_behind = exports_behind
        self._on_runs = on_runs
        self._periodic: list[tuple[float, Callable[[], None]]] = []
        self._started = False
        self._reset()
        metrics.observe_queue(lambda: len(self._queue), max_queue_size)
        threads = {
            binding.name: binding.scorer.threads
            for binding in self.bindings
            if isinstance(binding.scorer, FunctionScorer) and binding.scorer.threads is not None
        }
        if threads:
            metrics.observe_overdue_calls(lambda: {name: each.overdue for name, each in threads.items()})
        renew_in_child(self)
        restart_in_child(self)

    def renew_after_fork(self) -> None:
        self._reset(closed=self._closed)  # a processor shut down in the parent stays shut down

    def restart_after_fork(self) -> None:
        if self._started and not self._closed:  # running in the parent: in the child at once
            self.start()

    def _reset(self, closed: bool = False) -> None:
        """Fresh state: at construction and in a forked child, which must not share the parent's
        queue or locks, or believe the parent's thread is its own."""
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._queue: deque[Job] = deque()
        self._pending = 0
        self._idle = threading.Condition(threading.Lock())
        self._sleeping = False
        self._closed = closed
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wakeup: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._judging: set[asyncio.Task[None]] = set()  # jobs whose runs wait for their judges
        self._judge_runs = 0
        self._flush_scheduled = False
        self._background: set[asyncio.Task[None]] = set()

    # ---- producer side (any thread) -------------------------------------------------------

    def submit(self, job: Job) -> bool:
        """Queue a job without blocking. False (and the job told why) when full or shut down."""
        if self._closed:
            job.dropped("shutdown")
            self._metrics.run_outcome("dropped", "shutdown")
            return False
        if len(self._queue) >= self._max_queue_size:
            job.dropped("queue_full")
            self._metrics.run_outcome("dropped", "queue_full")
            throttled.warning(
                "queue_full", "otel_scorers: scoring queue full (%d runs); dropping runs", len(self._queue)
            )
            return False
        if self._thread is None:  # nobody called start() (the in-process processor always does)
            self.start()
        with self._idle:
            self._pending += 1
        self._queue.append(job)
        if self._sleeping:
            self._sleeping = False
            loop, wakeup = self._loop, self._wakeup
            if loop is not None and wakeup is not None:
                with contextlib.suppress(RuntimeError):  # the loop closed under us at shutdown
                    loop.call_soon_threadsafe(wakeup.set)
        return True

    def call_every(self, interval_s: float, callback: Callable[[], None]) -> None:
        """Run `callback` on the engine's loop every `interval_s` (hold-mode timeouts, say)."""
        self._periodic.append((interval_s, callback))

    @property
    def queue_depth(self) -> int:
        return len(self._queue)

    def force_flush(self, timeout_s: float = 30.0) -> bool:
        """Wait until every job submitted so far is scored and emitted. False on timeout."""
        deadline = time.monotonic() + timeout_s
        with self._idle:
            while self._pending > 0:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._idle.wait(remaining)
        try:  # everything scored so far is in the metrics too
            self._emitter.flush()
        except Exception:
            throttled.warning("emit", "otel_scorers: recording metrics failed", exc_info=True)
        return True

    def shutdown(self, timeout_s: float = 30.0) -> None:
        """Stop accepting work, finish what is pending within the timeout, count the rest."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        finished = self.force_flush(timeout_s)
        if self._thread is not None:
            self._ready.wait(5.0)  # a thread started just now has no loop to stop yet
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None:
            if not finished:
                abandoned = len(self._queue) + len(self._tasks) + len(self._judging)
                self._metrics.run_outcome("dropped", "shutdown", abandoned)
                logger.warning("otel_scorers: shutdown timed out; %d runs were not scored", abandoned)
                for job in list(self._queue):
                    job.dropped("shutdown")
                self._queue.clear()
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._stop_loop)
            thread.join(timeout=5.0)

    # ---- the loop thread -----------------------------------------------------------------

    def start(self) -> None:
        """Start the engine's thread, without waiting for it: jobs submitted before its loop runs
        wait in the queue. The in-process processor calls this when it is built (and the fork
        hook in a child), so an agent's thread never starts the engine or waits for it."""
        with self._lock:
            if self._thread is not None or self._closed:
                return
            self._started = True
            thread = threading.Thread(target=self._thread_main, name="otel-scorers", daemon=True)
            self._thread = thread
        thread.start()

    def _thread_main(self) -> None:
        ready = self._ready
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        self._wakeup = asyncio.Event()
        # Nothing the engine does (judge calls over instrumented HTTP clients included) is traced:
        # every task and worker thread of the loop starts from this context.
        token = otel_context.attach(untraced_context())
        try:
            for interval_s, callback in self._periodic:
                self._background.add(loop.create_task(self._every(interval_s, callback)))
            main = loop.create_task(self._consume())
            ready.set()
            with contextlib.suppress(asyncio.CancelledError):  # shutdown cancels everything
                loop.run_until_complete(main)
            # Let the cancelled runs unwind: a task destroyed while pending logs a traceback each.
            unwinding = asyncio.all_tasks(loop)
            if unwinding:
                loop.run_until_complete(asyncio.wait(unwinding, timeout=1.0))
        finally:
            otel_context.detach(token)
            loop.close()

    def _stop_loop(self) -> None:
        for task in asyncio.all_tasks():
            task.cancel()

    async def _every(self, interval_s: float, callback: Callable[[], None]) -> None:
        while True:
            await asyncio.sleep(interval_s)
            try:
                callback()
            except Exception:
                logger.exception("otel_scorers: periodic task failed")

    async def _consume(self) -> None:
        assert self._wakeup is not None
        slots = asyncio.Semaphore(self._max_concurrent_runs)
        inline_jobs = 0
        while True:
            if not self._queue:
                self._sleeping = True
                if self._queue:  # appended between the check and the flag
                    self._sleeping = False
                    continue
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            if self._exports_behind is not None and self._exports_behind():
                await self._wait_for_exports(self._exports_behind)
            job = self._queue.popleft()
            if self._inline:
                # Only quick checks: scored here, without a task per job (a task's creation, step
                # and callbacks cost more than six checks). The loop gets a turn every few jobs,
                # for its timers (held spans' timeouts, the metrics flush).
                try:
                    self._process_inline(job)
                except Exception:  # the loop goes on: this job was finished, its runs counted
                    logger.exception("otel_scorers: scoring a trace failed")
                inline_jobs += 1
                if inline_jobs % _INLINE_JOBS_PER_TURN == 0:
                    await asyncio.sleep(0)
                continue
            await slots.acquire()
            task = asyncio.get_running_loop().create_task(self._process(job))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            task.add_done_callback(lambda _: slots.release())

    async def _wait_for_exports(self, behind: Callable[[], bool]) -> None:
        # Bounded: an unreachable endpoint must not stop scoring (its exporter drops, and logs).
        deadline = time.monotonic() + _MAX_EXPORT_WAIT_S
        while behind() and time.monotonic() < deadline:
            await asyncio.sleep(0.005)

    def _build(self, job: Job) -> Sequence[AgentRun]:
        """The job's runs; none, counted and logged, when its spans cannot be built into runs."""
        try:
            runs = job.build()
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

    def _process_inline(self, job: Job) -> None:
        """`_process` for engines whose bindings are all quick checks (synchronous, never a judge)."""
        results: list[ScoredRun] = []
        try:
            runs = self._build(job)
            for run in runs:
                self._metrics.run_outcome("assembled")
                scores = score_run_now(self._quick, run, self._metrics.evaluation_outcome)
                self._emit(run, scores)
                self._yield()
                results.append((run, scores))
        finally:
            self._finish(job, results)

    async def _process(self, job: Job) -> None:
        """Build the job's runs, score and emit their quick checks, and hand their judge work to
        the judge lane; the job is finished when that is done too."""
        results: list[ScoredRun] = []
        judged: list[tuple[int, asyncio.Task[list[Score]]]] = []  # (index in results, its judging)
        try:
            runs = self._build(job)
            for run in runs:
                self._metrics.run_outcome("assembled")
                scores = await score_run(self._quick, run, self._metrics.evaluation_outcome)
                self._emit(run, scores)
                self._yield()
                judging = self._judge_lane(run, scores)
                if judging is not None:
                    judged.append((len(results), judging))
                results.append((run, scores))
        except BaseException:
            for _, judging in judged:
                judging.cancel()
            self._finish(job, results)
            raise
        if not judged:
            self._finish(job, results)
            return
        waiting = asyncio.get_running_loop().create_task(self._finish_after_judges(job, results, judged))
        self._judging.add(waiting)
        waiting.add_done_callback(self._judging.discard)

    def _judge_lane(self, run: AgentRun, checks: Sequence[Score]) -> asyncio.Task[list[Score]] | None:
        """The run's judge work as a task in the judge lane; None when there is none, or when the
        lane is full (then dropped and counted). `checks`, the run's quick scores, weigh in on
        the decisions of budget-paced bindings."""
        admitted = decide_all(self._judged, run, self._metrics.evaluation_outcome, checks)
        if not admitted:
            return None
        if self._judge_runs >= self._max_judge_runs:
            release(admitted)
            for binding, _ in admitted:
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

    async def _judge(self, run: AgentRun, admitted: Sequence[Admitted]) -> list[Score]:
        scores = await evaluate_decided(admitted, run)
        self._emit(run, scores)
        return scores

    async def _finish_after_judges(
        self, job: Job, results: list[ScoredRun], judged: list[tuple[int, asyncio.Task[list[Score]]]]
    ) -> None:
        try:
            for index, judging in judged:
                run, scores = results[index]
                with contextlib.suppress(Exception):  # `_judge` turns failures into error scores
                    results[index] = (run, [*scores, *await judging])
        finally:
            self._finish(job, results)

    def _flush_emitter(self) -> None:
        self._flush_scheduled = False
        try:
            self._emitter.flush()
        except Exception:
            throttled.warning("emit", "otel_scorers: recording metrics failed", exc_info=True)

    def _emit(self, run: AgentRun, scores: Sequence[Score]) -> None:
        try:
            self._emitter.emit(run, scores)
        except Exception:
            throttled.warning("emit", "otel_scorers: emitting scores failed", exc_info=True)

    def _finish(self, job: Job, results: Sequence[ScoredRun]) -> None:
        if not self._queue and not self._flush_scheduled:
            # The end of a burst: its held-back measurements are recorded a moment later, so that
            # runs that come one at a time are still recorded in batches (a metric reader's
            # collection records them before it reads, whenever it comes).
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # a task closed outside its loop (at shutdown): record them now
                self._flush_emitter()
            else:
                self._flush_scheduled = True
                loop.call_later(_METRICS_FLUSH_DELAY_S, self._flush_emitter)
        try:
            job.finished(results)
        except Exception:
            logger.exception("otel_scorers: job completion callback failed")
        with self._idle:
            self._pending -= 1
            if self._pending == 0:
                self._idle.notify_all()


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
    scores = await evaluate_decided(decide_all(first, run, not_admitted), run)
    if len(first) < len(bindings):
        paced = [binding for binding in bindings if binding.paced is not None]
        scores.extend(await evaluate_decided(decide_all(paced, run, not_admitted, scores), run))
    return scores


def score_run_now(
    bindings: Sequence[Binding],
    run: AgentRun,
    not_admitted: Callable[[str, str], None] | None = None,
) -> list[Score]:
    """`score_run` for bindings whose scorers are all synchronous (quick checks)."""
    scores: list[Score] = []
    for binding in admit_all(bindings, run, not_admitted):
        result = binding.evaluate(run)
        if not isinstance(result, Score):  # a hand-made `Check` around a coroutine function
            close = getattr(result, "close", None)
            if close is not None:
                close()
            result = binding.error(TypeError("a quick check returned an awaitable"), 0.0)
        scores.append(result)
    return scores


def admit_all(
    bindings: Sequence[Binding], run: AgentRun, not_admitted: Callable[[str, str], None] | None = None
) -> list[Binding]:
    """The bindings that admit the run (a budget-paced binding's probability and spend need
    `decide_all`: quick checks, which this is for, are never paced)."""
    admitted: list[Binding] = []
    for binding in bindings:
        admission = binding.admit(run)
        if admission == "admitted":
            admitted.append(binding)
        elif not_admitted is not None:
            not_admitted(binding.name, admission)
    return admitted


def decide_all(
    bindings: Sequence[Binding],
    run: AgentRun,
    not_admitted: Callable[[str, str], None] | None = None,
    checks: Sequence[Score] = (),
) -> list[Admitted]:
    """`admit_all` with the pacing's decisions, which `evaluate_decided` (or `release`) settles.
    `checks`: the run's quick scores, the risk signals of paced bindings."""
    admitted: list[Admitted] = []
    for binding in bindings:
        admission, decision = binding.decide(run, checks)
        if admission == "admitted":
            admitted.append((binding, decision))
            continue
        if decision is not None and binding.paced is not None:
            binding.paced.settle(decision, None)
        if not_admitted is not None:
            not_admitted(binding.name, admission)
    return admitted


def release(admitted: Sequence[Admitted]) -> None:
    """Admitted runs that will not be scored after all: their pacing gives back what it set aside."""
    for binding, decision in admitted:
        if decision is not None and binding.paced is not None:
            binding.paced.settle(decision, None)


async def evaluate_decided(admitted: Sequence[Admitted], run: AgentRun) -> list[Score]:
    """`evaluate_all`; a paced binding's score carries its inclusion probability, and its cost
    goes back to its pacing."""
    try:
        scores = await evaluate_all([binding for binding, _ in admitted], run)
    except BaseException:
        release(admitted)
        raise
    paced = {binding.name: (binding, decision) for binding, decision in admitted if decision is not None}
    if not paced:
        return scores
    for index, score in enumerate(scores):
        found = paced.pop(score.scorer, None)
        if found is None:
            continue
        binding, decision = found
        if binding.paced is not None:
            binding.paced.settle(decision, score)
        scores[index] = replace(score, sampling_probability=decision.probability)
    release([found for found in paced.values()])  # no score came back for these
    return scores


async def evaluate_all(bindings: Sequence[Binding], run: AgentRun) -> list[Score]:
    """Score an admitted run with each binding, the asynchronous ones concurrently."""
    scores: list[Score] = []
    waiting: list[Awaitable[Score]] = []
    for binding in bindings:
        result = binding.evaluate(run)
        if isinstance(result, Score):
            scores.append(result)
        else:
            waiting.append(result)
    if waiting:
        scores.extend(await asyncio.gather(*waiting))
    return scores
