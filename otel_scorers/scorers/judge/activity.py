"""What a judge is doing now, for the pipeline's instruments: calls waiting for one of its
`concurrency` slots, calls out to the provider, and each finished call's duration and outcome.

Plain counters under a lock: the judge knows no metrics SDK. The pipeline reads the counters and
listens for finished calls (`pipeline/judge_instruments.py`)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

#: Told of each finished provider call: the model, its outcome (`ok`, or the error kind of
#: `retry.classify`: `timeout`, `rate_limited`, ...), and its duration in seconds.
CallListener = Callable[[str, str, float], None]


class JudgeActivity:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: tuple[CallListener, ...] = ()
        #: Calls waiting for a slot.
        self.queued = 0
        #: Calls holding a slot: sent, or about to be.
        self.in_flight = 0

    def renew_after_fork(self) -> None:
        """A forked child has no calls of its own yet, and must not inherit a held lock."""
        self._lock = threading.Lock()
        self.queued = self.in_flight = 0

    def listen(self, listener: CallListener) -> None:
        with self._lock:
            if listener not in self._listeners:
                self._listeners = (*self._listeners, listener)

    def add_queued(self, delta: int) -> None:
        with self._lock:
            self.queued += delta

    def add_in_flight(self, delta: int) -> None:
        with self._lock:
            self.in_flight += delta

    def finished(self, model: str, outcome: str, seconds: float) -> None:
        for listener in self._listeners:
            # An instrument that fails must not fail the judge's call.
            with contextlib.suppress(Exception):
                listener(model, outcome, seconds)
