"""Logging that cannot flood: the same message is logged at most once per interval, with a count."""

from __future__ import annotations

import logging
import threading
import time

from otel_scorers.fork_safety import renew_in_child

logger = logging.getLogger("otel_scorers")


class ThrottledLog:
    """Logs a warning the first time a key occurs, then at most once per `interval_s` with the
    number of occurrences since the last line."""

    def __init__(self, interval_s: float = 60.0, log: logging.Logger = logger) -> None:
        self._interval_s = interval_s
        self._log = log
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}
        self._lock = threading.Lock()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        self._lock = threading.Lock()

    def warning(self, key: str, message: str, *args: object, exc_info: bool = False) -> None:
        now = time.monotonic()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self._interval_s:
                self._suppressed[key] = self._suppressed.get(key, 0) + 1
                return
            self._last[key] = now
            repeated = self._suppressed.pop(key, 0)
        if repeated:
            message += f" ({repeated} more since the last report)"
        self._log.warning(message, *args, exc_info=exc_info)


throttled = ThrottledLog()
