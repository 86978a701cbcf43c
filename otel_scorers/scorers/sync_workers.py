"""The worker threads of one synchronous scorer.

A user's sync function cannot run on the engine's loop (it would stall every other scorer), and
Python cannot stop a thread: a call that hangs keeps its thread until it returns. So each sync
scorer gets its own few threads. A hung call holds one of them, never a thread another scorer
needs; calls past their binding's timeout that are still running are counted (`overdue`, the
`otel_scorers.scorer.overdue_calls` gauge) and logged at most once a minute.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from otel_scorers.fork_safety import renew_in_child
from otel_scorers.throttled_log import throttled

#: Threads per sync scorer: calls beyond these wait for one (within the binding's timeout).
DEFAULT_SYNC_WORKERS = 4


class _Call:
    __slots__ = ("argument", "context", "function", "future", "loop", "overdue", "running")

    def __init__(
        self,
        function: Callable[[Any], Any],
        argument: Any,
        loop: asyncio.AbstractEventLoop,
        future: asyncio.Future[Any],
    ) -> None:
        self.function = function
        self.argument = argument
        # The caller's context goes with the call: the engine's has instrumentation suppressed.
        self.context = contextvars.copy_context()
        self.loop = loop
        self.future = future
        self.running = False
        self.overdue = False

    def settle(self, result: Any, error: BaseException | None) -> None:
        def deliver() -> None:
            if self.future.done():
                return
            if error is not None:
                self.future.set_exception(error)
            else:
                self.future.set_result(result)

        with contextlib.suppress(RuntimeError):  # the loop closed while the call ran
            self.loop.call_soon_threadsafe(deliver)


class SyncWorkers:
    """At most `size` daemon threads (started as needed) running one scorer's calls in order."""

    def __init__(self, name: str, size: int = DEFAULT_SYNC_WORKERS) -> None:
        if size < 1:
            raise ValueError(f"a sync scorer needs at least 1 worker thread, got {size}")
        self.name = name
        self.size = size
        self._reset()
        renew_in_child(self)

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._work_ready = threading.Condition(self._lock)
        self._queue: deque[_Call] = deque()
        self._threads = 0
        self._idle = 0
        self._overdue = 0

    def renew_after_fork(self) -> None:
        self._reset()  # the parent's threads (and their calls) are not the child's

    @property
    def overdue(self) -> int:
        """Calls still running past their timeout, each holding one of this scorer's threads."""
        return self._overdue

    async def run(self, function: Callable[[Any], Any], argument: Any) -> Any:
        loop = asyncio.get_running_loop()
        call = _Call(function, argument, loop, loop.create_future())
        with self._lock:
            self._queue.append(call)
            if self._idle:
                self._work_ready.notify()
            elif self._threads < self.size:
                self._threads += 1
                threading.Thread(target=self._work, name=f"otel-scorers {self.name}", daemon=True).start()
        try:
            return await call.future
        except asyncio.CancelledError:  # the binding's timeout
            self._abandon(call)
            raise

    def _abandon(self, call: _Call) -> None:
        with self._lock:
            if not call.running:
                with contextlib.suppress(ValueError):  # finished meanwhile
                    self._queue.remove(call)
                return
            call.overdue = True
            self._overdue += 1
            held = self._overdue
        throttled.warning(
            f"overdue {self.name}",
            "otel_scorers: scorer %s: %d of its %d worker threads held by calls still running past "
            "their timeout",
            self.name,
            held,
            self.size,
        )

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._queue:
                    self._idle += 1
                    self._work_ready.wait()
                    self._idle -= 1
                call = self._queue.popleft()
                call.running = True
            result: Any = None
            error: BaseException | None = None
            try:
                result = call.context.run(call.function, call.argument)
            except Exception as exc:  # the binding turns it into an error result
                error = exc
            except BaseException as exc:  # SystemExit and the like must not reach the engine's loop
                error = RuntimeError(f"scorer raised {type(exc).__name__}: {exc}")
            with self._lock:
                call.running = False
                if call.overdue:
                    self._overdue -= 1
            call.settle(result, error)
