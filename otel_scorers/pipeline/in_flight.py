"""Items handed on and not yet done: a count, and a wait for it to reach zero by a deadline.

What `force_flush` and shutdown wait for, in the runner (items queued or being worked on) and the
conversation scheduler (conversations handed to scoring): one count, one wait, one home.
"""

from __future__ import annotations

import threading
import time


class InFlight:
    """A count of items in flight, safe from any thread."""

    def __init__(self) -> None:
        self._count = 0
        # Counting takes the condition's lock itself: `with` on the lock is done in C, where
        # `with` on the condition is two calls of Python (`add` is on the agent's thread per run).
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)

    @property
    def count(self) -> int:
        with self._lock:
            return self._count

    def add(self, limit: int | None = None) -> bool:
        """Count one more item; False, and nothing counted, when `limit` items are already in flight."""
        with self._lock:
            if limit is not None and self._count >= limit:
                return False
            self._count += 1
            return True

    def done(self) -> None:
        """One item finished (done, dropped or failed): waiters wake when none is left."""
        with self._lock:
            self._count -= 1
            if self._count <= 0:
                self._idle.notify_all()

    def wait_idle(self, deadline: float) -> bool:
        """Wait until no item is in flight or `deadline` (`time.monotonic()`) passes: False then."""
        with self._idle:
            while self._count > 0:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._idle.wait(remaining)
        return True
