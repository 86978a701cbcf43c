"""The judge's bounded cache: identical questions are answered once."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any


class BoundedCache:
    """A least-recently-used map with at most `size` entries (0: caches nothing)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: Hashable, value: Any) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def renew_after_fork(self) -> None:
        """A forked child must not inherit a lock another thread held at fork time."""
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)
