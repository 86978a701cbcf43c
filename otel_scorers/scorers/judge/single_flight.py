"""Single flight and the cache: an identical question is answered once, whoever asks it and when.

A question already answered comes from the bounded cache; one being asked right now is waited
for instead of paying for a second call. Both come back marked, so that their usage counts zero.

A question's key holds the judged texts (a run's answer, its context: megabytes, at times); the
cache keeps a 16-byte digest of it instead (`compact_key`), so that what it holds does not grow
with the texts of the runs scored: a `score` over a file keeps no run's text once it is scored.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import weakref
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

from otel_scorers.scorers.judge.cache import BoundedCache

T = TypeVar("T")
#: Characters of a key's text past which it is kept as a digest (a short key costs less as itself).
_DIGEST_PAST_CHARS = 256


def compact_key(key: Hashable) -> Hashable:
    """`key`, or a digest of it when it is plain data (text, numbers, tuples of them) longer than
    a few hundred characters. A key holding another object is kept as it is: its `repr` may name
    no more than its address, which a later object could reuse."""
    size = _plain_size(key)
    if size is None or size <= _DIGEST_PAST_CHARS:
        return key
    text = repr(key).encode("utf-8", "surrogatepass")
    return ("digest", hashlib.blake2b(text, digest_size=16).digest())


def _plain_size(key: object) -> int | None:
    """The characters of plain data `key` holds, or None when it holds anything else."""
    if key is None or isinstance(key, (bool, int, float)):
        return 1
    if isinstance(key, (str, bytes)):
        return len(key)
    if isinstance(key, tuple):
        total = 1
        for item in key:
            size = _plain_size(item)
            if size is None:
                return None
            total += size
        return total
    return None


class SingleFlight:
    """The answers of one judge, by question key: cached ones, and those being computed (per
    event loop: a future belongs to one loop). Safe to share across threads and loops."""

    def __init__(self, cache: BoundedCache) -> None:
        self.cache = cache
        self._lock = threading.Lock()
        self._inflight: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[Hashable, asyncio.Future[Any]]
        ] = weakref.WeakKeyDictionary()

    def renew_after_fork(self) -> None:
        """A forked child must not inherit a lock held at fork time, nor the parent's futures."""
        self._lock = threading.Lock()
        self._inflight = weakref.WeakKeyDictionary()
        self.cache.renew_after_fork()

    async def once(self, key: Hashable, compute: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """The cached answer for `key`, or `compute()`'s, cached; True when it was not computed
        here. Callers asking the same thing at the same time wait for the first one's answer
        instead of paying for their own call; if that one fails, each tries on its own."""
        key = compact_key(key)
        cached = self.cache.get(key)
        if cached is not None:
            return cached, True
        loop = asyncio.get_running_loop()
        with self._lock:
            inflight = self._inflight.get(loop)
            if inflight is None:
                inflight = self._inflight[loop] = {}
        pending = inflight.get(key)
        if pending is not None:
            try:
                return await asyncio.shield(pending), True
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise  # this caller was cancelled, not the one it waited for
        future: asyncio.Future[Any] = loop.create_future()
        inflight[key] = future
        try:
            value = await compute()
        except BaseException:
            future.cancel()  # the callers waiting on it try on their own
            raise
        finally:
            if inflight.get(key) is future:
                del inflight[key]
        self.cache.put(key, value)
        future.set_result(value)
        return value, False
