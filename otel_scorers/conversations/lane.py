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

import logging
import threading
import time
from collections.abc import Callable, Sequence

from otel_scorers.conversation_turns import Conversation, Turn
from otel_scorers.conversations.emission import ConversationCounts, ConversationEmitter
from otel_scorers.conversations.scoring import ConversationBinding, score_conversation
from otel_scorers.conversations.stage import AtShutdown, ConversationStage
from otel_scorers.pipeline.runner import FLUSH_TIMEOUT_S, Runner

logger = logging.getLogger("otel_scorers")


class ConversationScoring:
    """The `Work` of the lane's runner: score an ended conversation once and emit its scores
    (each as a task: the judged ones wait for the judge)."""

    def __init__(
        self,
        bindings: Sequence[ConversationBinding],
        emitter: ConversationEmitter,
        counts: ConversationCounts,
    ) -> None:
        self.bindings = tuple(bindings)
        self._emitter = emitter
        self._counts = counts

    async def do(self, conversation: Conversation, done: Callable[[], None]) -> None:
        try:
            scores = await score_conversation(self.bindings, conversation)
            self._emitter.emit(conversation, scores)
            self._counts.add("scored")
        except Exception:
            logger.exception("otel_scorers: scoring a conversation failed")
        finally:
            done()

    def dropped(self, conversation: Conversation, reason: str) -> None:
        self._counts.add("lane_full" if reason == "queue_full" else "dropped_shutdown")

    def behind(self) -> bool:
        return False

    def flush(self) -> None:
        pass

    def in_flight(self) -> int:
        return 0

    def abandoned(self, count: int) -> None:
        self._counts.add("dropped_shutdown", count)
        logger.warning("otel_scorers: shutdown timed out; %d conversations were not scored", count)


class ConversationLane:
    """The stage, and a runner that closes ended conversations on a timer and scores them."""

    def __init__(
        self,
        stage: ConversationStage,
        bindings: Sequence[ConversationBinding],
        emitter: ConversationEmitter,
        counts: ConversationCounts,
        *,
        tick_s: float,
        at_shutdown: AtShutdown,
        max_concurrent: int = 32,
        max_waiting: int = 4096,
    ) -> None:
        self.stage = stage
        self.bindings = tuple(bindings)
        self.counts = counts
        self._at_shutdown = at_shutdown
        self._runner: Runner[Conversation] = Runner(
            ConversationScoring(bindings, emitter, counts),
            max_waiting,
            max_concurrent,
            name="otel-scorers-conversations",
        )
        self._runner.call_every(tick_s, self._tick)
        self._closed = False
        self._lock = threading.Lock()

    # ---- any thread -----------------------------------------------------------------------

    def add(self, turn: Turn) -> None:
        if not self._closed:
            self.stage.add(turn)
            self._runner.start()  # its timer closes the conversations that idle

    def add_all(self, turns: Sequence[Turn]) -> None:
        for turn in turns:
            self.add(turn)

    def start(self) -> None:
        self._runner.start()

    def poll(self) -> int:
        """Hand every conversation that has ended by now to scoring; how many."""
        ended = self.stage.close_due()
        for conversation in ended:
            self._submit(conversation)
        return len(ended)

    def flush(self, timeout_s: float = FLUSH_TIMEOUT_S) -> bool:
        """Close what has ended by now and wait until it is scored and emitted. False on timeout."""
        self.poll()
        return self._runner.force_flush(timeout_s)

    def shutdown(self, timeout_s: float = FLUSH_TIMEOUT_S) -> None:
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
        self._runner.shutdown(max(0.0, deadline - time.monotonic()))

    def _submit(self, conversation: Conversation) -> None:
        self.counts.add("closed", 1, conversation.ended_by)
        self._runner.submit(conversation)

    def _tick(self) -> None:
        if not self._closed:
            self.poll()
