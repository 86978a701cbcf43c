"""A small runner, as the OpenTelemetry SDK keeps its `BatchProcessor` apart from what it runs: a
bounded queue whose `submit` never blocks (full: drop and count), a daemon thread with an
asyncio loop, renewal after a fork, flush, shutdown and timers. For each item it calls its
`Work`, and it knows nothing of scorers or emission.

`submit()` is what the producer's thread pays: an append to a deque and, only when the loop
sleeps, a wake-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar, runtime_checkable

from opentelemetry import context as otel_context

from otel_scorers.fork_safety import renew_in_child, restart_in_child
from otel_scorers.pipeline.in_flight import InFlight
from otel_scorers.throttled_log import throttled

logger = logging.getLogger("otel_scorers")
T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)

#: How long a flush or a shutdown waits when not told, as the OpenTelemetry SDK's processors do.
FLUSH_TIMEOUT_S = 30.0
#: Items done at once (synchronous work) between two turns of the runner's loop.
_ITEMS_PER_TURN = 8
#: Longest the runner waits for work that says it is behind before it starts the next item.
_MAX_BEHIND_WAIT_S = 5.0


class Work(Protocol[T_contra]):
    """What a `Runner` runs. Each item is begun by `do` (a task, at most `max_concurrent` at
    once), or by `do_now` for work that can do it at once (`DoneAtOnce`), and is over when the
    work calls the `done` it was given, which may be later (work handed on to another lane)."""

    async def do(self, item: T_contra, done: Callable[[], None]) -> None: ...

    def dropped(self, item: T_contra, reason: str) -> None:
        """The item will not be done: the queue was full, or the runner shut down."""

    def behind(self) -> bool:
        """True: wait (a few seconds at most) before the next item, as when exporters fell behind."""
        ...

    def flush(self) -> None:
        """What items done so far left pending, made final (at `force_flush`)."""

    def in_flight(self) -> int:
        """Items begun and handed on, not yet done (counted at a shutdown that timed out)."""
        ...

    def abandoned(self, count: int) -> None:
        """A shutdown timed out with `count` items begun and not done (each item still queued is
        told by `dropped` instead: every item is counted once)."""


@runtime_checkable
class DoneAtOnce(Protocol[T_contra]):
    """Work that may do its items at once on the loop, without a task each, when `synchronous`
    (read once, when the runner is made)."""

    @property
    def synchronous(self) -> bool: ...

    def do_now(self, item: T_contra, done: Callable[[], None]) -> None: ...


def untraced_context() -> otel_context.Context:
    """The current context with OpenTelemetry instrumentation suppressed, by the SDK's own keys:
    the ones instrumentations read (the HTTP one too, for HTTP client instrumentations)."""
    context = otel_context.set_value(otel_context._SUPPRESS_INSTRUMENTATION_KEY, True)
    return otel_context.set_value(otel_context._SUPPRESS_HTTP_INSTRUMENTATION_KEY, True, context)


class Runner(Generic[T]):
    """Runs `work` on the items submitted to it, on a thread of its own named `name`."""

    def __init__(
        self, work: Work[T], max_queue_size: int, max_concurrent: int, name: str = "otel-scorers"
    ) -> None:
        if max_queue_size < 1:
            raise ValueError(f"max_queue_size must be at least 1, got {max_queue_size}")
        self._work = work
        #: The work, where it does its items at once on the loop (no task per item).
        self._at_once: DoneAtOnce[T] | None = (
            work if isinstance(work, DoneAtOnce) and work.synchronous else None
        )
        self._max_queue_size = max_queue_size
        self._max_concurrent = max_concurrent
        self._name = name
        self._periodic: list[tuple[float, Callable[[], None]]] = []
        self._started = False
        self._reset()
        renew_in_child(self)
        restart_in_child(self)

    def renew_after_fork(self) -> None:
        self._reset(closed=self._closed)  # a runner shut down in the parent stays shut down

    def restart_after_fork(self) -> None:
        if self._started and not self._closed:  # running in the parent: in the child at once
            self.start()

    def _reset(self, closed: bool = False) -> None:
        """Fresh state: at construction and in a forked child, which must not share the parent's
        queue or locks, or believe the parent's thread is its own."""
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._queue: deque[T] = deque()
        self._in_flight = InFlight()
        self._sleeping = False
        self._closed = closed
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wakeup: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._background: set[asyncio.Task[None]] = set()
        #: Callbacks handed over (`call_soon`) before the loop ran; the loop stopped for good.
        self._early: list[Callable[[], None]] = []
        self._stopped = False

    # ---- producer side (any thread) -------------------------------------------------------

    def submit(self, item: T) -> bool:
        """Queue an item without blocking. False (and the work told why) when full or shut down."""
        if self._closed:
            self._work.dropped(item, "shutdown")
            return False
        if len(self._queue) >= self._max_queue_size:
            self._work.dropped(item, "queue_full")
            throttled.warning(
                f"queue_full:{self._name}",
                "otel_scorers: %s: queue full (%d waiting); dropping what comes until it drains",
                self._name,
                len(self._queue),
            )
            return False
        if self._thread is None:  # nobody called start() (the in-process processor always does)
            self.start()
        self._in_flight.add()
        self._queue.append(item)
        if self._sleeping:
            self._sleeping = False
            loop, wakeup = self._loop, self._wakeup
            if loop is not None and wakeup is not None:
                with contextlib.suppress(RuntimeError):  # the loop closed under us at shutdown
                    loop.call_soon_threadsafe(wakeup.set)
        return True

    def call_every(self, interval_s: float, callback: Callable[[], None]) -> None:
        """Run `callback` on the runner's loop every `interval_s` (hold-mode timeouts, say)."""
        self._periodic.append((interval_s, callback))  # read when the loop starts

    def call_soon(self, callback: Callable[[], None]) -> bool:
        """Run `callback` on the runner's loop as soon as it turns, from any thread (a second
        source of work, such as ended conversations, on the same loop as the items: one loop for
        all judge work). Starts the runner if need be. False, and nothing runs, once the loop
        has stopped (or the runner was shut down before it ever started)."""
        with self._lock:
            if self._stopped or (self._closed and self._thread is None):
                return False
            loop = self._loop
            if loop is None:
                self._early.append(callback)
        if loop is None:
            self.start()
            return True
        try:
            loop.call_soon_threadsafe(callback)
        except RuntimeError:  # closed under us at shutdown
            return False
        return True

    @property
    def queue_depth(self) -> int:
        return len(self._queue)

    def force_flush(self, timeout_s: float = FLUSH_TIMEOUT_S) -> bool:
        """Wait until every item submitted so far is done, then flush the work. False on timeout."""
        if not self._in_flight.wait_idle(time.monotonic() + timeout_s):
            return False
        self._work.flush()
        return True

    def shutdown(self, timeout_s: float = FLUSH_TIMEOUT_S) -> None:
        """Stop accepting items, finish what is pending within the timeout, count the rest."""
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
                # begun and not done: in a task, handed on, or waiting for a slot
                begun = self._in_flight.count - len(self._queue)
                self._work.abandoned(begun)
                for item in list(self._queue):
                    self._work.dropped(item, "shutdown")
                self._queue.clear()
            with self._lock:
                self._stopped = True
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._stop_loop)
            thread.join(timeout=5.0)

    # ---- the loop thread -----------------------------------------------------------------

    def start(self) -> None:
        """Start the runner's thread, without waiting for it: items submitted before its loop runs
        wait in the queue. The in-process processor calls this when it is built (and the fork
        hook in a child), so an agent's thread never starts the runner or waits for it."""
        with self._lock:
            if self._thread is not None or self._closed:
                return
            self._started = True
            thread = threading.Thread(target=self._thread_main, name=self._name, daemon=True)
            self._thread = thread
        thread.start()

    def _thread_main(self) -> None:
        ready = self._ready
        loop = asyncio.new_event_loop()
        with self._lock:
            self._loop = loop
            early, self._early = self._early, []
        for callback in early:
            loop.call_soon(callback)
        asyncio.set_event_loop(loop)
        self._wakeup = asyncio.Event()
        # Nothing the runner's work does (judge calls over instrumented HTTP clients included) is
        # traced: every task and worker thread of the loop starts from this context.
        token = otel_context.attach(untraced_context())
        try:
            for interval_s, callback in self._periodic:
                self._background.add(loop.create_task(self._every(interval_s, callback)))
            main = loop.create_task(self._consume())
            ready.set()
            with contextlib.suppress(asyncio.CancelledError):  # shutdown cancels everything
                loop.run_until_complete(main)
            # Let the cancelled tasks unwind: a task destroyed while pending logs a traceback each.
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

    def _done(self) -> None:
        self._in_flight.done()

    async def _consume(self) -> None:
        assert self._wakeup is not None
        slots = asyncio.Semaphore(self._max_concurrent)
        work, at_once = self._work, self._at_once
        done_now = 0
        while True:
            if not self._queue:
                self._sleeping = True
                if self._queue:  # appended between the check and the flag
                    self._sleeping = False
                    continue
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            if work.behind():
                await self._wait_while_behind()
            if at_once is None:
                # A slot first: an item waiting for one stays in the queue, where a shutdown that
                # times out counts it and tells the work it was dropped.
                await slots.acquire()
                if not self._queue:  # cleared by that shutdown meanwhile
                    slots.release()
                    continue
            item = self._queue.popleft()
            if at_once is not None:
                # Done here, without a task per item (a task's creation, step and callbacks cost
                # more than six checks). The loop gets a turn every few items, for its timers.
                try:
                    at_once.do_now(item, self._done)
                except Exception:  # the loop goes on; the work said this item was done
                    logger.exception("otel_scorers: scoring a trace failed")
                done_now += 1
                if done_now % _ITEMS_PER_TURN == 0:
                    await asyncio.sleep(0)
                continue
            task = asyncio.get_running_loop().create_task(work.do(item, self._done))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            task.add_done_callback(lambda _: slots.release())

    async def _wait_while_behind(self) -> None:
        # Bounded: an unreachable endpoint must not stop the work (its exporter drops, and logs).
        deadline = time.monotonic() + _MAX_BEHIND_WAIT_S
        while self._work.behind() and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
