"""A circuit breaker for a judge that refuses connections: after a few consecutive connection
failures, calls fail at once as `judge_unavailable` instead of each waiting its turn to be
refused; one probe goes out after a cool-down, and a success closes the breaker."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

#: Consecutive connection failures that open the breaker.
THRESHOLD = 5
#: The first cool-down; each failed probe doubles it, up to `MAX_COOLDOWN_S`.
COOLDOWN_S = 1.0
MAX_COOLDOWN_S = 30.0
_CONNECTION_ERRORS = frozenset(
    {"APIConnectionError", "ConnectionError", "ConnectionRefusedError", "ClientConnectorError"}
)


def connection_failed(exc: BaseException) -> bool:
    """The judge could not be reached at all (refused, unresolvable, reset before a reply), as
    opposed to a reply with an error status or a slow reply. litellm wraps a refused connection
    in errors that carry a status of their own (500), so the whole chain is read."""
    seen: BaseException | None = exc
    for _ in range(16):
        if seen is None:
            return False
        if isinstance(seen, ConnectionError) or type(seen).__name__ in _CONNECTION_ERRORS:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class Breaker:
    """Counts consecutive connection failures. `wait()` is 0 while calls may go out, else the
    seconds until the next probe; `shed` counts the calls refused while it was open."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._failures = 0
        self._cooldown = COOLDOWN_S
        self._open_until = 0.0
        self._probing = False
        self.shed = 0
        self._lock = threading.Lock()

    def wait(self) -> float:
        """0 when a call may go out now (the probe, once a cool-down has passed), else how long
        until one may; a refused call is counted in `shed`."""
        with self._lock:
            if self._failures < THRESHOLD:
                return 0.0
            now = self._clock()
            if now >= self._open_until and not self._probing:
                self._probing = True
                return 0.0
            self.shed += 1
            return max(0.0, self._open_until - now) or self._cooldown

    def succeeded(self) -> None:
        with self._lock:
            self._failures = 0
            self._cooldown = COOLDOWN_S
            self._probing = False

    def failed(self, exc: BaseException) -> None:
        """A call ended in `exc`: a connection failure counts, anything else ends a probe."""
        with self._lock:
            was_probe = self._probing
            self._probing = False
            if not connection_failed(exc):
                self._failures = 0  # the judge answered, if with an error: it is reachable
                return
            self._failures += 1
            if self._failures >= THRESHOLD:
                if was_probe:
                    self._cooldown = min(MAX_COOLDOWN_S, self._cooldown * 2)
                self._open_until = self._clock() + self._cooldown

    @property
    def open(self) -> bool:
        with self._lock:
            return self._failures >= THRESHOLD

    def renew_after_fork(self) -> None:
        """A forked child must not inherit a lock another thread held at fork time."""
        self._lock = threading.Lock()
