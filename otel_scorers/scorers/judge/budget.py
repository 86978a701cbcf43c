"""The judge's hourly cost budget."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class CostBudget:
    """An hourly budget as a token bucket: full at start, refilled continuously at
    budget/3600 per second, spent by each call's cost. When it is empty, judges skip."""

    def __init__(self, usd_per_hour: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.usd_per_hour = usd_per_hour
        self._clock = clock
        self._available = usd_per_hour
        self._updated = clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._available = min(
            self.usd_per_hour, self._available + (now - self._updated) * self.usd_per_hour / 3600
        )
        self._updated = now

    @property
    def available(self) -> float:
        with self._lock:
            self._refill()
            return self._available

    def exhausted(self) -> bool:
        return self.available <= 0

    def spend(self, usd: float) -> None:
        with self._lock:
            self._refill()
            self._available -= usd

    def after_fork(self) -> None:
        """A forked child must not inherit a lock another thread held at fork time."""
        self._lock = threading.Lock()
