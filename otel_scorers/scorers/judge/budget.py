"""The judge's hourly cost budget."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class CostBudget:
    """An hourly budget as a token bucket: full at start, refilled continuously at
    budget/3600 per second. It is a cap: each call `reserve`s its expected cost before it is
    sent, and is admitted only while something is left after the calls already reserved, then
    `settle`s with what it really cost. However many calls race for the last cent, the
    overshoot is at most one call's worth. When it is empty, judges skip."""

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

    def reserve(self, usd: float) -> bool:
        """Set `usd` aside for a call about to be sent; False (nothing set aside) when the
        budget is spent, counting what calls in flight have reserved."""
        with self._lock:
            self._refill()
            if self._available <= 0:
                return False
            self._available -= usd
            return True

    def settle(self, reserved: float, actual: float | None) -> None:
        """A reserved call finished: give back its reservation, take what it really cost
        (None: nothing, as for a call that failed before the provider billed it)."""
        with self._lock:
            self._refill()
            self._available += reserved - (actual or 0.0)

    def spend(self, usd: float) -> None:
        with self._lock:
            self._refill()
            self._available -= usd

    def after_fork(self) -> None:
        """A forked child must not inherit a lock another thread held at fork time."""
        self._lock = threading.Lock()
