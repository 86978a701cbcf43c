"""The conversation lane: closes ended conversations on a timer and scores each once, off the
caller's thread.

Turns go into the stage from any thread (`add`: a hash and a dict update). A thread of the lane's
own, with an asyncio loop, polls the stage every `tick_s`, and scores each ended conversation with
the conversation bindings (judged ones concurrently, so they batch), at most `max_concurrent`
conversations at a time; ended conversations beyond `max_waiting` more are dropped and counted.
At shutdown the conversations still open are scored (`at_shutdown="score"`) or dropped and
counted (`"drop"`), within the timeout; what the timeout cuts off is counted too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Sequence

from opentelemetry import context as otel_context

from otel_scorers.conversations.emission import ConversationCounts, ConversationEmitter
from otel_scorers.conversations.scoring import ConversationBinding, score_conversation
from otel_scorers.conversations.stage import AtShutdown, ConversationStage
from otel_scorers.conversations.turns import Conversation, Turn
from otel_scorers.fork_safety import renew_in_child, restart_in_child
from otel_scorers.runner import untraced_context
from otel_scorers.throttled_log import throttled

logger = logging.getLogger("otel_scorers")


class ConversationLane:
    def __init__(
        self,
        stage: ConversationStage,
        bindings: Sequence[ConversationBinding],
        emitter: ConversationEmitter,
        counts: ConversationCounts,
        *,
        tick_s: float = 1.0,
        at_shutdown: AtShutdown = "score",
        max_concurrent: int = 32,
        max_waiting: int = 4096,
    ) -> None:
        self.stage = stage
        self.bindings = tuple(bindings)
        self._emitter = emitter
        self.counts = counts
        self._tick_s = tick_s
        self._at_shutdown = at_shutdown
        self._max_concurrent = max_concurrent
        self._max_waiting = max_waiting
        self._started = False
        self._reset()
        renew_in_child(self)
        restart_in_child(self)

    def renew_after_fork(self) -> None:
        self._reset(closed=self._closed)

    def restart_after_fork(self) -> None:
        if self._started and not self._closed:
            self.start()

    def _reset(self, closed: bool = False) -> None:
        self._lock = threading.Lock()
        self._idle = threading.Condition(threading.Lock())
        self._pending = 0
        self._waiting: deque[Conversation] = deque()
        self._closed = closed
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._running = 0
        self._tasks: set[asyncio.Task[None]] = set()

    # ---- any thread -----------------------------------------------------------------------

    def add(self, turn: Turn) -> None:
        if not self._closed:
            self.stage.add(turn)
            if self._thread is None:  # its timer closes the conversations that idle
                self.start()

    def add_all(self, turns: Sequence[Turn]) -> None:
        for turn in turns:
            self.add(turn)

    def poll(self) -> int:
        """Hand every conversation that has ended by now to scoring; how many."""
        ended = self.stage.close_due()
        for conversation in ended:
            self._submit(conversation)
        return len(ended)

    def flush(self, timeout_s: float = 30.0) -> bool:
        """Close what has ended by now and wait until it is scored and emitted. False on timeout."""
        self.poll()
        return self._wait(time.monotonic() + timeout_s)

    def shutdown(self, timeout_s: float = 30.0) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        deadline = time.monotonic() + timeout_s
        self.poll()
        still_open = self.stage.close_all("shutdown")
        if self._at_shutdown == "score":
            for conversation in still_open:
                self._submit(conversation)
        elif still_open:
            self.counts.add("dropped_shutdown", len(still_open))
            logger.info(
                "otel_scorers: %d open conversations dropped at shutdown (at_shutdown: drop)", len(still_open)
            )
        if not self._wait(deadline):
            with self._idle:
                unfinished = self._pending
            self.counts.add("dropped_shutdown", unfinished)
            logger.warning("otel_scorers: shutdown timed out; %d conversations were not scored", unfinished)
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._stop)
            thread.join(timeout=2.0)

    def _wait(self, deadline: float) -> bool:
        with self._idle:
            while self._pending > 0:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._idle.wait(remaining)
        return True

    def _submit(self, conversation: Conversation) -> None:
        self.counts.add("closed", 1, conversation.ended_by)
        if len(self._waiting) >= self._max_waiting:
            self.counts.add("lane_full")
            throttled.warning(
                "conversation_lane_full",
                "otel_scorers: %d conversations wait to be scored; dropping",
                self._max_waiting,
            )
            return
        with self._idle:
            self._pending += 1
        self._waiting.append(conversation)
        self.start()
        self._ready.wait(5.0)
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._drain)

    # ---- the lane's thread ----------------------------------------------------------------

    def start(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            self._started = True
            self._thread = threading.Thread(target=self._main, name="otel-scorers-conversations", daemon=True)
            thread = self._thread
        thread.start()

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        token = otel_context.attach(untraced_context())  # judge calls are not traced
        try:
            self._loop = loop
            self._ready.set()
            with contextlib.suppress(asyncio.CancelledError):
                loop.run_until_complete(self._tick_forever())
            # Let the cancelled scorings unwind: a task destroyed while pending logs a traceback.
            unwinding = asyncio.all_tasks(loop)
            if unwinding:
                loop.run_until_complete(asyncio.wait(unwinding, timeout=1.0))
        finally:
            otel_context.detach(token)
            loop.close()

    def _stop(self) -> None:
        for task in asyncio.all_tasks():
            task.cancel()

    async def _tick_forever(self) -> None:
        while True:
            await asyncio.sleep(self._tick_s)
            if self._closed:
                continue
            try:
                self.poll()
            except Exception:
                logger.exception("otel_scorers: closing conversations failed")

    def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._waiting and self._running < self._max_concurrent:
            conversation = self._waiting.popleft()
            self._running += 1
            task = loop.create_task(self._score(conversation))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _score(self, conversation: Conversation) -> None:
        try:
            scores = await score_conversation(self.bindings, conversation)
            self._emitter.emit(conversation, scores)
            self.counts.add("scored")
        except Exception:
            logger.exception("otel_scorers: scoring a conversation failed")
        finally:
            self._running -= 1
            with self._idle:
                self._pending -= 1
                if self._pending == 0:
                    self._idle.notify_all()
            self._drain()
