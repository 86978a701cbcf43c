"""Deterministic trace-id sampling and per-binding rate limits.

Sampling follows OpenTelemetry's consistent probability rule: the randomness is the trace id's
rightmost 56 bits, the rate becomes a rejection threshold, and a trace is kept when its
randomness is at least the threshold. The same rate keeps the same traces in every process and
replica, and a lower rate keeps a subset of what a higher one keeps.
"""

from __future__ import annotations

import threading
import time

from otel_scorers.fork_safety import renew_in_child

#: The sampling rate of a binding that names none: every trace (conversation) is scored.
DEFAULT_RATE = 1.0
RANDOMNESS_BITS = 56
_MAX_RANDOMNESS = 1 << RANDOMNESS_BITS
_RANDOMNESS_MASK = _MAX_RANDOMNESS - 1


def threshold_for(rate: float) -> int:
    """The rejection threshold for a sampling rate in [0, 1]: 0 keeps all, 2^56 keeps none."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"sampling rate must be between 0 and 1, got {rate}")
    return _MAX_RANDOMNESS - round(rate * _MAX_RANDOMNESS)


def randomness(trace_id: int) -> int:
    return trace_id & _RANDOMNESS_MASK


class TraceIdSampler:
    """Keeps a trace when the randomness of its id reaches the threshold for `rate`."""

    __slots__ = ("rate", "threshold")

    def __init__(self, rate: float = DEFAULT_RATE) -> None:
        self.rate = rate
        self.threshold = threshold_for(rate)

    def sampled(self, trace_id: int) -> bool:
        return (trace_id & _RANDOMNESS_MASK) >= self.threshold

    def __repr__(self) -> str:
        return f"TraceIdSampler(rate={self.rate})"


#: Beyond this a token bucket is no limit at all (and its float arithmetic stops counting).
MAX_PER_MINUTE = 1_000_000


class RateLimiter:
    """A token bucket: at most `per_minute` acquisitions a minute, with bursts up to that many."""

    __slots__ = ("__weakref__", "_capacity", "_last", "_lock", "_per_second", "_tokens")

    def __init__(self, per_minute: int) -> None:
        if not 1 <= per_minute <= MAX_PER_MINUTE:
            raise ValueError(
                f"max_per_minute must be between 1 and {MAX_PER_MINUTE:,}, got {per_minute}; leave it unset for no limit"
            )
        self._capacity = float(per_minute)
        self._per_second = per_minute / 60.0
        self._tokens = float(per_minute)
        self._last = time.monotonic()
        self._lock = threading.Lock()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        self._lock = threading.Lock()

    def try_acquire(self, now: float | None = None) -> bool:
        with self._lock:
            now = time.monotonic() if now is None else now
            self._tokens = min(self._capacity, self._tokens + (now - self._last) * self._per_second)
            self._last = now
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return True
            return False
