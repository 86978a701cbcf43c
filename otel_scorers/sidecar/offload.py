"""Large requests are decoded and sorted out on a thread of their own, so that the event loop
keeps answering (`/healthz`, small requests) meanwhile: decoding OTLP/JSON and sorting out tens of
thousands of spans is pure Python, which hands the interpreter lock back every few milliseconds
on a thread, and never on the loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

#: Requests at least this large (decoded bytes) are worked on off the loop; smaller ones cost
#: less than the hand-over (about 0.1 ms), which would show at tens of thousands of requests a second.
OFFLOAD_BYTES = 256 * 1024


class Offload:
    """One worker thread (large requests take turns: their CPU is bounded, not their number)."""

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None

    async def run(self, function: Callable[[], T]) -> T:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="otel-scorers-decode")
        return await asyncio.get_running_loop().run_in_executor(self._executor, function)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
