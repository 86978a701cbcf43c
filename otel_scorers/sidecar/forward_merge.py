"""Inline mode: requests to forward while earlier ones are still on their way downstream go
together, as one request, when the one before them is answered.

Each request downstream costs both ends a fixed amount beside its bytes (a gRPC call in Python
is about a millisecond of CPU on the receiving side for the bench's 290 kB requests, 2.3 ms for
four of them in one); a collector batches what it forwards for the same reason. Merging costs
nothing to encode: OTLP export requests concatenated are the request holding all their spans
(protobuf parses concatenated messages as one, repeated fields appended). Nothing waits for a
timer: a request goes on alone when no send is in progress, and with whatever arrived meanwhile
when one is, so merging grows with the load and adds at most one downstream answer's wait.

Every request is still acknowledged upstream only once downstream has taken it. A merged request
that downstream refuses for any reason but being unreachable (too large for it, one bad part) is
sent again part by part, so that each upstream request gets its own answer.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass

from otel_scorers.sidecar.forwarder import Forwarder, ForwardError

#: At most this many bytes go downstream in one merged request: the OpenTelemetry Collector's
#: and gRPC's default limit on a received message. A larger request goes on alone, as it came.
MERGED_BYTES = 4 * 1024 * 1024

#: Sends downstream in progress at once; requests arriving beyond them wait to go together.
SENDS_IN_PROGRESS = 2


@dataclass(slots=True, eq=False)
class _Waiting:
    body: bytes
    sent: asyncio.Future[None]


class MergingForwarder:
    """A `Forwarder` that merges the requests waiting for a send in progress into one."""

    def __init__(
        self, forwarder: Forwarder, merged_bytes: int = MERGED_BYTES, sends: int = SENDS_IN_PROGRESS
    ) -> None:
        self._forwarder = forwarder
        self._merged_bytes = merged_bytes
        self._sends = sends
        self._sending = 0
        self._waiting: deque[_Waiting] = deque()
        self._tasks: set[asyncio.Task[None]] = set()

    async def send(self, body: bytes) -> None:
        if self._sending < self._sends and not self._waiting:  # nothing to merge with
            self._sending += 1
            try:
                await self._forwarder.send(body)
            finally:
                self._sending -= 1
                self._start_sends()
            return
        waiting = _Waiting(body, asyncio.get_running_loop().create_future())
        self._waiting.append(waiting)
        self._start_sends()
        try:
            await waiting.sent
        except asyncio.CancelledError:
            # The upstream request was given up on: not sent, if it is still waiting.
            if waiting in self._waiting:
                self._waiting.remove(waiting)
            raise

    async def close(self) -> None:
        await self._forwarder.close()
        while self._tasks:  # sends still in progress fail on the closed channel, and say so
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _start_sends(self) -> None:
        while self._waiting and self._sending < self._sends:
            merged = [self._waiting.popleft()]
            size = len(merged[0].body)
            while self._waiting and size + len(self._waiting[0].body) <= self._merged_bytes:
                size += len(self._waiting[0].body)
                merged.append(self._waiting.popleft())
            self._sending += 1
            task = asyncio.create_task(self._send(merged))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _send(self, merged: list[_Waiting]) -> None:
        try:
            await self._send_merged(merged)
        finally:
            self._sending -= 1
            self._start_sends()

    async def _send_merged(self, merged: list[_Waiting]) -> None:
        try:
            await self._forwarder.send(
                merged[0].body if len(merged) == 1 else b"".join(w.body for w in merged)
            )
        except ForwardError as exc:
            if len(merged) > 1 and not exc.unreachable:
                await asyncio.gather(*(self._send_alone(waiting) for waiting in merged))
                return
            _settle(merged, exc)
        except Exception as exc:  # not the forwarder's own refusal: each request's handler says so
            _settle(merged, exc)
        else:
            _settle(merged, None)

    async def _send_alone(self, waiting: _Waiting) -> None:
        try:
            await self._forwarder.send(waiting.body)
        except Exception as exc:
            _settle([waiting], exc)
        else:
            _settle([waiting], None)


def _settle(merged: list[_Waiting], error: BaseException | None) -> None:
    for waiting in merged:
        if waiting.sent.done():  # its upstream request was given up on meanwhile
            continue
        if error is None:
            waiting.sent.set_result(None)
        else:
            waiting.sent.set_exception(error)
