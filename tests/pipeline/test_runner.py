"""`Runner` on its own: a bounded queue that never blocks its producer, a thread with one loop for
the items, its timers and the callbacks handed to it (`call_soon`), flush and shutdown."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future

from otel_scorers.pipeline.runner import Runner


class Gate:
    """Holds back the items that wait at it while it is closed (`clear`); opened (`set`) from
    any thread."""

    def __init__(self) -> None:
        self._open: Future[None] = Future()
        self._open.set_result(None)

    def clear(self) -> None:
        self._open = Future()

    def set(self) -> None:
        if not self._open.done():
            self._open.set_result(None)

    async def wait(self) -> None:
        if not self._open.done():  # shielded: an item given up does not open the gate for the others
            await asyncio.shield(asyncio.wrap_future(self._open))


class Recorded:
    """A `Work` that keeps what happens to its items; `gate` holds `do` back until set."""

    def __init__(self) -> None:
        self.done: list[int] = []
        self.drops: list[tuple[int, str]] = []
        self.abandoned_count = 0
        self.threads: set[str] = set()
        self.loops: set[int] = set()
        self.gate = Gate()
        self.flushed = 0

    async def do(self, item: int, done: Callable[[], None]) -> None:
        self.threads.add(threading.current_thread().name)
        self.loops.add(id(asyncio.get_running_loop()))
        await self.gate.wait()
        self.done.append(item)
        done()

    def dropped(self, item: int, reason: str) -> None:
        self.drops.append((item, reason))

    def behind(self) -> bool:
        return False

    def flush(self) -> None:
        self.flushed += 1

    def in_flight(self) -> int:
        return 0

    def abandoned(self, count: int) -> None:
        self.abandoned_count += count


def test_items_are_done_on_the_runners_thread_and_a_flush_waits_for_them() -> None:
    work = Recorded()
    runner: Runner[int] = Runner(work, max_queue_size=100, max_concurrent=4, name="test-runner")
    runner.start()
    assert all(runner.submit(item) for item in range(50))
    assert runner.force_flush(10)
    assert sorted(work.done) == list(range(50))
    assert work.threads == {"test-runner"} and work.flushed == 1
    runner.shutdown(5)


def test_a_full_queue_drops_and_says_why_without_blocking() -> None:
    work = Recorded()
    work.gate.clear()  # the items begun wait, so the queue fills
    runner: Runner[int] = Runner(work, max_queue_size=3, max_concurrent=1)
    accepted = [runner.submit(item) for item in range(10)]
    # One item may have left the queue for the loop before the rest came: 3 or 4 are taken.
    assert accepted.count(True) in (3, 4)
    assert [reason for _, reason in work.drops] == ["queue_full"] * accepted.count(False)
    work.gate.set()
    assert runner.force_flush(10)
    assert len(work.done) == accepted.count(True)
    runner.shutdown(5)
    assert runner.submit(99) is False and work.drops[-1] == (99, "shutdown")


def test_a_shutdown_that_times_out_counts_what_was_not_done() -> None:
    work = Recorded()
    work.gate.clear()
    runner: Runner[int] = Runner(work, max_queue_size=10, max_concurrent=1)
    for item in range(3):
        runner.submit(item)
    runner.shutdown(0.2)
    assert work.done == []
    assert work.abandoned_count == 1  # the one begun; the two still queued are told as dropped, once
    assert [reason for _, reason in work.drops] == ["shutdown", "shutdown"]


def test_call_soon_runs_on_the_loop_of_the_items_before_and_after_the_start() -> None:
    work = Recorded()
    runner: Runner[int] = Runner(work, max_queue_size=10, max_concurrent=1)
    seen: list[tuple[str, int]] = []
    ran = threading.Event()

    def note() -> None:
        seen.append((threading.current_thread().name, id(asyncio.get_running_loop())))
        if len(seen) == 2:
            ran.set()

    assert runner.call_soon(note)  # handed over before the loop exists: starts the runner
    runner.submit(1)
    assert runner.force_flush(10)
    assert threading.Thread(target=runner.call_soon, args=(note,)).start() is None
    assert ran.wait(10)
    assert {loop for _, loop in seen} == work.loops  # one loop for both sources of work
    assert {name for name, _ in seen} == work.threads == {"otel-scorers"}
    runner.shutdown(5)
    assert runner.call_soon(note) is False


def test_timers_run_on_the_loop_of_the_items() -> None:
    work = Recorded()
    runner: Runner[int] = Runner(work, max_queue_size=10, max_concurrent=1)
    ticked: list[int] = []
    ran = threading.Event()

    def tick() -> None:
        ticked.append(id(asyncio.get_running_loop()))
        ran.set()

    runner.call_every(0.01, tick)
    runner.submit(1)
    assert runner.force_flush(10) and ran.wait(10)
    assert set(ticked) == work.loops
    runner.shutdown(5)
