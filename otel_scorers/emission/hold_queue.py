"""Run spans kept back from downstream until their scores are attached, each at most a timeout.

One queue for both places that hold: the processor with `downstream=` (SDK spans, on the agent's
and the engine's threads) and the sidecar's inline mode (received spans, on its event loop).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any, Generic, TypeVar

from otel_scorers.fork_safety import renew_in_child

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")
#: Hands a released item on, with the attributes to attach (None: its hold timed out, or it was
#: released without scores). Called outside the queue's lock.
Release = Callable[[T, "Mapping[str, Any] | None"], None]


class HoldQueue(Generic[K, T]):
    """Held items by key, oldest first; each goes to `on_release` exactly once: when released
    with its scores, when its `timeout_s` has passed (`release_expired`), or at `release_all`."""

    def __init__(self, timeout_s: float, on_release: Release[T], clock: Callable[[], float] = time.monotonic):
        self._timeout_s = timeout_s
        self._on_release = on_release
        self._clock = clock
        self._held: OrderedDict[K, tuple[T, float]] = OrderedDict()
        self._lock = threading.Lock()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        # The parent's held spans are the parent's to send on: a forked child forgets them.
        self._lock = threading.Lock()
        self._held = OrderedDict()

    def __len__(self) -> int:
        return len(self._held)

    def hold(self, key: K, item: T) -> bool:
        """Hold `item` until released; False (and nothing held) when `key` is already held."""
        deadline = self._clock() + self._timeout_s
        with self._lock:
            if key in self._held:
                return False
            self._held[key] = (item, deadline)
            return True

    def release(self, key: K, attributes: Mapping[str, Any] | None = None) -> None:
        with self._lock:
            entry = self._held.pop(key, None)
        if entry is not None:  # else already gone on, at its timeout
            self._on_release(entry[0], attributes)

    def release_expired(self) -> None:
        now = self._clock()
        expired: list[T] = []
        with self._lock:
            held = self._held
            while held:
                key, (item, deadline) = next(iter(held.items()))
                if deadline > now:
                    break
                del held[key]
                expired.append(item)
        for item in expired:
            self._on_release(item, None)

    def release_all(self) -> None:
        with self._lock:
            items = [item for item, _ in self._held.values()]
            self._held.clear()
        for item in items:
            self._on_release(item, None)
