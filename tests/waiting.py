"""Waiting in tests for something to have happened, never for a while; a clock for what is
about time.

`wait_until` is the one polling loop of the tests: it checks a condition the test can observe (a
count reached, a line logged, a port answering) until it holds, and fails naming what it waited
for. Where the thing waited for can say when it is done (a flush, a shutdown, `OtlpCapture.wait_for`
on its condition variable, an event), wait on that instead.
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable

#: The first pause between two checks; each pause doubles, up to `MAX_INTERVAL_S`: a condition
#: that holds soon is seen soon, and a slow one (an HTTP query) is not asked hundreds of times.
FIRST_INTERVAL_S = 0.001
MAX_INTERVAL_S = 0.05


def wait_until(
    condition: Callable[[], object],
    timeout_s: float = 60.0,
    message: str | Callable[[], str] = "the condition",
) -> None:
    """Return as soon as `condition()` is true; `AssertionError` naming `message` (a callable:
    called then, for what is known at the end) when it is still false after `timeout_s`, a guard
    against a hang (far from how long anything takes, even on a machine whose cores are busy).
    An exception from `condition` ends the wait with it."""
    deadline = time.monotonic() + timeout_s
    interval = FIRST_INTERVAL_S
    while not condition():
        left = deadline - time.monotonic()
        if left <= 0:
            said = message() if callable(message) else message
            raise AssertionError(f"waited {timeout_s:g} s for {said}")
        time.sleep(min(interval, left))
        interval = min(interval * 2, MAX_INTERVAL_S)


class FakeClock:
    """A `time.monotonic` stand-in that the test moves: for behaviour about time (a cool-down,
    an expiry, a wait for a handoff), given to what takes a clock."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def cpu_seconds(work: Callable[[], object], rounds: int = 3) -> float:
    """The CPU time `work()` takes, the best of `rounds`: for how a cost grows with its input
    (compare two sizes), never against a bound in seconds. Other processes on the machine do
    not move CPU time, and the best of a few leaves out a collection or a stall."""
    best = math.inf
    for _ in range(rounds):
        gc.collect()
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best
