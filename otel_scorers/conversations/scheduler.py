"""The conversation scheduler: closes ended conversations on a timer and scores each once, on the loop
that scores runs.

Turns go into the stage from any thread (`add`: a hash and a dict update). On the runner that
scores the runs (`host`: the engine's, so that run and conversation judging share one event loop,
as litellm wants), a timer polls the stage every `tick_s` and each ended conversation is scored
as a task of that loop with the conversation bindings (judged ones concurrently, so they batch),
at most `max_concurrent` conversations at a time; ended conversations beyond `max_waiting` more
are dropped and counted. Where nothing scores runs in the process (a sidecar whose runs are
scored in child processes), the scheduler has a runner of its own, used for its loop and timer only.
At shutdown the conversations still open are scored (`at_shutdown="score"`) or dropped and
counted (`"drop"`), within the timeout: they are handed to scoring as the scheduler makes room, so its
bound drops nothing the timeout has time for, and what the timeout cuts off is counted once,
whether it was waiting to be handed over, queued or being scored.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from otel_scorers.conversation_turns import Conversation, Turn
from otel_scorers.conversations.counts import ConversationCounts
from otel_scorers.conversations.scoring import ConversationBinding, score_conversation
from otel_scorers.conversations.stage import AtShutdown, ConversationStage
from otel_scorers.emission import Emission
from otel_scorers.fork_safety import renew_in_child
from otel_scorers.pipeline.in_flight import InFlight
from otel_scorers.pipeline.runner import FLUSH_TIMEOUT_S, Runner
from otel_scorers.throttled_log import throttled

logger = logging.getLogger("otel_scorers")
#: How often a shutdown looks for room in a full scheduler (seconds): a conversation scores in ~0.5 ms.
_FEED_WAIT_S = 0.002


class _LoopOnly:
    """The `Work` of a runner kept for its loop and timers: no items ever reach it."""

    async def do(self, item: Any, done: Callable[[], None]) -> None:
        done()

    def dropped(self, item: Any, reason: str) -> None:
        pass

    def behind(self) -> bool:
        return False

    def flush(self) -> None:
        pass

    def in_flight(self) -> int:
        return 0

    def abandoned(self, count: int) -> None:
        pass


class ConversationScheduler:
    """The stage, and the tasks that score the conversations it closes on `host`'s loop."""

    def __init__(
        self,
        stage: ConversationStage,
        bindings: Sequence[ConversationBinding],
        emission: Emission,
        counts: ConversationCounts,
        host: Runner[Any] | None = None,
        *,
        tick_s: float,
        at_shutdown: AtShutdown,
        max_concurrent: int = 32,
        max_waiting: int = 4096,
    ) -> None:
        self.stage = stage
        self._max_waiting = max_waiting
        self.bindings = tuple(bindings)
        self.counts = counts
        self._emission = emission
        self._at_shutdown = at_shutdown
        self._max_concurrent = max_concurrent
        self._max_pending = max_concurrent + max_waiting
        self._own_host = host is None
        self._host: Runner[Any] = host or Runner(_LoopOnly(), 1, 1, name="otel-scorers-conversations")
        self._host.call_every(tick_s, self._tick)
        self._closed = False
        self._lock = threading.Lock()
        self._reset()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._pending = InFlight()  # handed to the loop, not yet scored and emitted
        self._slots: asyncio.Semaphore | None = None  # made on the loop
        self._tasks: set[asyncio.Task[None]] = set()

    # ---- any thread -----------------------------------------------------------------------

    def add(self, turn: Turn) -> None:
        if self._closed:  # a run scored while the pipeline shuts down: counted, not kept
            self.counts.add("turn_after_shutdown")
            return
        self.stage.add(turn)
        if self._own_host:
            self._host.start()  # its timer closes the conversations that idle

    def add_all(self, turns: Sequence[Turn]) -> None:
        for turn in turns:
            self.add(turn)

    def poll(self) -> int:
        """Hand every conversation that has ended by now to scoring; how many."""
        ended = self.stage.close_due()
        for conversation in ended:
            self._submit(conversation)
        return len(ended)

    def flush(self, timeout_s: float = FLUSH_TIMEOUT_S) -> bool:
        """Close what has ended by now and wait until it is scored and emitted. False on timeout."""
        self.poll()
        return self._pending.wait_idle(time.monotonic() + timeout_s)

    def shutdown(self, timeout_s: float = FLUSH_TIMEOUT_S) -> None:
        """Score (or drop) what is still open within the timeout; before the host's loop stops."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        deadline = time.monotonic() + timeout_s
        ended = self.stage.close_due()
        still_open = self.stage.close_all("shutdown")
        if self._at_shutdown == "score":
            ended.extend(still_open)
            still_open = []
        unsent = self._feed(ended, deadline)
        if unsent:
            self.counts.add("dropped_shutdown", unsent)
            logger.warning("otel_scorers: shutdown timed out; %d conversations were not scored", unsent)
        if still_open:
            self.counts.add("dropped_shutdown", len(still_open))
            logger.info(
                "otel_scorers: %d open conversations dropped at shutdown (at_shutdown: drop)", len(still_open)
            )
        if not self._pending.wait_idle(deadline):
            left = self._pending.count
            self.counts.add("dropped_shutdown", left)
            logger.warning("otel_scorers: shutdown timed out; %d conversations were not scored", left)
            # Cancelled now, they unwind (judge calls included) while the host winds down.
            self._host.call_soon(self._cancel_all)
        if self._own_host:
            self._host.shutdown(max(0.0, deadline - time.monotonic()))

    def _feed(self, conversations: Sequence[Conversation], deadline: float) -> int:
        """Hand `conversations` to scoring as the scheduler makes room, until `deadline`; how many
        were not handed over."""
        for index, conversation in enumerate(conversations):
            while self._full():
                if time.monotonic() >= deadline:
                    return len(conversations) - index
                time.sleep(_FEED_WAIT_S)
            self._submit(conversation)
        return 0

    def _full(self) -> bool:
        return self._pending.count >= self._max_pending

    def _submit(self, conversation: Conversation) -> None:
        self.counts.add("closed", 1, conversation.ended_by)
        if not self._pending.add(limit=self._max_pending):
            self.counts.add("waiting_full")
            throttled.warning(
                "conversation_waiting_full",
                "otel_scorers: %d conversations already wait to be scored; dropping ended conversations "
                "until scoring catches up (counted in otel_scorers.conversations, outcome waiting_full)",
                self._max_pending,
            )
            return
        if not self._host.call_soon(lambda: self._start(conversation)):
            self._done()
            self.counts.add("dropped_shutdown")

    def _done(self) -> None:
        self._pending.done()

    # ---- the host's loop ------------------------------------------------------------------

    def _tick(self) -> None:
        if not self._closed:
            self.poll()

    def _cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    def _start(self, conversation: Conversation) -> None:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._max_concurrent)
        task = asyncio.get_running_loop().create_task(self._score(conversation, self._slots))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _score(self, conversation: Conversation, slots: asyncio.Semaphore) -> None:
        try:
            async with slots:
                scores = await score_conversation(self.bindings, conversation)
            self._emission.emit_conversation(conversation, scores)
            self.counts.add("scored")
        except Exception:
            logger.exception("otel_scorers: scoring a conversation failed")
        finally:
            self._done()
