"""The engine gives the GIL to the host's threads while it scores: a release after every fifth of
a millisecond of work (none for a run scored in less), that a thread waiting for the GIL takes."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator

import pytest

from otel_scorers.pipeline.scoring_pipeline import HostYield

from ..waiting import FakeClock

#: The documented stretch of work between two releases (docs/performance.md).
INTERVAL_S = 0.0002


def test_a_stretch_shorter_than_the_interval_releases_nothing_a_longer_one_once_per_interval() -> None:
    clock, released = FakeClock(), []
    host_yield = HostYield(clock, released.append)
    host_yield()  # the stretch of work starts
    clock.now += 0.4 * INTERVAL_S
    host_yield()
    assert released == []
    clock.now += 0.8 * INTERVAL_S  # 1.2 intervals since the stretch started
    host_yield()
    assert released == [0]  # time.sleep(0)
    clock.now += 0.8 * INTERVAL_S
    host_yield()
    assert released == [0]  # 0.8 intervals since the release
    clock.now += 0.4 * INTERVAL_S
    host_yield()
    assert released == [0, 0]


def test_work_that_resumes_after_a_rest_starts_a_new_stretch() -> None:
    clock, released = FakeClock(), []
    host_yield = HostYield(clock, released.append)
    host_yield()
    host_yield.rest()  # the engine had nothing more to do; the host had the GIL meanwhile
    clock.now += 1.0
    host_yield()
    assert released == []
    clock.now += 1.2 * INTERVAL_S
    host_yield()
    assert released == [0]


@pytest.fixture
def no_forced_switch() -> Iterator[None]:
    """Without the interpreter's own switching (every 5 ms), only what the working thread gives
    back lets another thread run while it computes."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(60.0)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def test_a_thread_waiting_for_the_gil_runs_in_the_middle_of_a_long_stretch_of_work(
    no_forced_switch: None,
) -> None:
    woken = threading.Event()
    ran: list[bool] = []

    def host() -> None:  # an agent's thread, waiting for a model's reply
        woken.wait()
        ran.append(True)  # needs the GIL: it runs only when the working thread gives it up

    thread = threading.Thread(target=host)
    thread.start()
    host_yield = HostYield()
    host_yield()
    woken.set()  # the reply is in: from here the host's thread waits for the GIL
    deadline = time.perf_counter() + 30.0  # a guard against a hang, far from what it takes
    while not ran and time.perf_counter() < deadline:
        total = 0
        for number in range(1_000):  # computing, holding the GIL, no system call
            total += number
        host_yield()
    ran_while_working = bool(ran)
    thread.join()
    assert ran_while_working, "the host's thread never ran while the work went on"
