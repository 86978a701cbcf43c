"""The judge's hourly caps: dollars, and calls."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class CostBudget:
    """An hourly budget as a token bucket: full at start, refilled continuously at
    budget/3600 per second. It is a cap: each call `reserve`s its expected cost before it is
    sent, and is admitted only while something is left after the calls already reserved, then
    `settle`s with what it really cost. However many calls race for the last cent, the
    overshoot is at most one call's worth. When it is empty, judges skip.

    The same bucket counts calls (`whole=True`: a call is admitted only while a whole one is
    left). `pending` is what calls in flight have reserved: while a refused call would fit once
    they settle (they reserved more than they will cost), it is worth waiting for them rather
    than refusing with most of the budget unspent."""

    def __init__(self, usd_per_hour: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.usd_per_hour = usd_per_hour
        self._clock = clock
        self._available = usd_per_hour
        self._pending = 0.0
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

    @property
    def pending(self) -> float:
        with self._lock:
            return self._pending

    def exhausted(self, whole: bool = False) -> bool:
        """Spent: nothing left, not even once the calls in flight settle."""
        with self._lock:
            self._refill()
            left = self._available + self._pending
            return left < 1.0 if whole else left <= 0

    def reserve(self, usd: float, whole: bool = False) -> bool:
        """Set `usd` aside for a call about to be sent; False (nothing set aside) when the
        budget is spent, counting what calls in flight have reserved."""
        with self._lock:
            self._refill()
            if (self._available < usd) if whole else (self._available <= 0):
                return False
            self._available -= usd
            self._pending += usd
            return True

    def could_fit_later(self) -> bool:
        """Whether a call could be admitted once the calls in flight give back what they
        reserved beyond their cost."""
        with self._lock:
            self._refill()
            return self._pending > 0 and self._available + self._pending > 0

    def settle(self, reserved: float, actual: float | None) -> None:
        """A reserved call finished: give back its reservation, take what it really cost
        (None: nothing, as for a call that failed before the provider billed it)."""
        with self._lock:
            self._refill()
            self._pending = max(0.0, self._pending - reserved)
            self._available += reserved - (actual or 0.0)

    def spend(self, usd: float) -> None:
        with self._lock:
            self._refill()
            self._available -= usd

    def renew_after_fork(self) -> None:
        """A forked child must not inherit a lock another thread held at fork time."""
        self._lock = threading.Lock()
