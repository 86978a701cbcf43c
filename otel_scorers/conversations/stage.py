"""The conversation stage: open conversations within bounds, and the decision that one has ended.

A turn joins its conversation when some conversation binding samples that conversation (by a
hash of its id: all of a conversation's turns or none, the same decision in every process). A
conversation ends when it has been idle for `idle_timeout_s`, has been open `max_duration_s`, has
had `max_turns` turns, or a turn matched the end predicate. Memory is bounded three ways: open
conversations (`max_open`: the least recently active one is evicted), turns kept per conversation
(`max_turns_kept`: the first and the latest are kept, the ones between dropped and counted in
`Conversation.trimmed`) and bytes (`max_bytes`: least recently active evicted). The bytes are all
a conversation holds: its kept turns (their ids and text included), its id, and the span id of
every turn it had, which it remembers to keep a resent turn once (`SPAN_ID_BYTES` each, kept until
it ends, trimmed turns' too). Evictions are counted, never silent, and so are turns whose
conversation id was cut to its bounded form (`id_cut`, `conversation_turns.MAX_CONVERSATION_ID`).

The clock is injectable: time is the stage's (when a turn arrived), not the spans', so that
turns replayed late or from another host do not end a conversation early.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from otel_scorers.conversation_turns import Conversation, EndReason, Turn
from otel_scorers.fork_safety import renew_in_child
from otel_scorers.selection.sampling import DEFAULT_RATE, RANDOMNESS_BITS, threshold_for

Clock = Callable[[], float]
AtShutdown = Literal["score", "drop"]
#: What happened to a turn or a conversation, for `otel_scorers.conversations`.
Outcome = Literal[
    "sampled_out",
    "no_conversation",
    "duplicate_turn",
    "evicted",
    "trimmed_turn",
    "dropped_shutdown",
    "id_cut",
]
#: What remembering one turn's span id costs, in bytes: a 64-bit int (36) and its share of the
#: set's table, which `tracemalloc` shows at 30 to 70 more (the most just after the table grows).
SPAN_ID_BYTES = 112
#: What an open conversation costs besides its turns and its id: its record and its entries in
#: the stage's two tables (bytes, measured as above).
CONVERSATION_OVERHEAD_BYTES = 400


def conversation_randomness(conversation_id: str) -> int:
    """56 bits drawn from the conversation id: a hash, so ids with a shared prefix or sequence
    numbers spread evenly. BLAKE2b, not Python's `hash`, which differs between processes."""
    digest = hashlib.blake2b(conversation_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> (64 - RANDOMNESS_BITS)


class ConversationSampler:
    """Keeps a conversation when the randomness of its id reaches the threshold for `rate`: the
    trace-id rule (`otel_scorers.selection.sampling`) on a hash of the conversation id."""

    __slots__ = ("rate", "threshold")

    def __init__(self, rate: float = DEFAULT_RATE) -> None:
        self.rate = rate
        self.threshold = threshold_for(rate)

    def sampled(self, conversation_id: str) -> bool:
        return conversation_randomness(conversation_id) >= self.threshold

    def __repr__(self) -> str:
        return f"ConversationSampler(rate={self.rate})"


@dataclass(frozen=True, slots=True)
class StageLimits:
    idle_timeout_s: float = 300.0
    max_duration_s: float = 3600.0
    max_turns: int = 100
    max_open: int = 10_000
    max_turns_kept: int = 50
    max_bytes: int = 64 * 1024 * 1024

    def __post_init__(self) -> None:
        for name in ("idle_timeout_s", "max_duration_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.max_turns_kept < 2:
            raise ValueError(
                f"max_turns_kept must be at least 2 (the first and the last turn), got {self.max_turns_kept}"
            )
        for name in ("max_turns", "max_open", "max_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")


@dataclass(slots=True)
class _Open:
    first_seen: float
    last_seen: float
    turns: list[Turn] = field(default_factory=list)
    span_ids: set[int] = field(default_factory=set)
    trimmed: int = 0
    bytes: int = 0

    @property
    def turn_count(self) -> int:
        return len(self.turns) + self.trimmed


class ConversationStage:
    """Open conversations and their turns; `add` from any thread, `close_due` on a timer."""

    def __init__(
        self,
        limits: StageLimits,
        sampler: ConversationSampler,
        clock: Clock = time.monotonic,
        counted: Callable[[Outcome, int], None] | None = None,
    ) -> None:
        """`sampler`: the widest of the conversation bindings' samplers (a conversation none of
        them samples is never kept). `counted(outcome, n)` hears what was left out."""
        self.limits = limits
        self.sampler = sampler
        self.clock = clock
        self._counted = counted or (lambda outcome, n: None)
        self._reset()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        self._reset()  # a forked child must not close the parent's conversations a second time

    def _reset(self) -> None:
        self._lock = threading.Lock()
        #: By last activity, least recent first: idle ones and eviction candidates come first.
        self._open: OrderedDict[str, _Open] = OrderedDict()
        #: By first turn, oldest first: for `max_duration_s`.
        self._by_start: dict[str, _Open] = {}
        self._bytes = 0
        self._ended: list[Conversation] = []

    @property
    def open_count(self) -> int:
        return len(self._open)

    @property
    def bytes(self) -> int:
        return self._bytes

    def add(self, turn: Turn) -> None:
        """Keep a turn of a sampled conversation; a conversation it ends is closed at once and
        handed out by the next `close_due`."""
        if turn.id_cut:
            self._counted("id_cut", 1)
        if not self.sampler.sampled(turn.conversation_id):
            self._counted("sampled_out", 1)
            return
        limits = self.limits
        with self._lock:
            now = self.clock()
            key = turn.conversation_id
            conversation = self._open.get(key)
            if conversation is None:
                if len(self._open) >= limits.max_open:
                    self._evict_one()
                conversation = _Open(now, now, bytes=CONVERSATION_OVERHEAD_BYTES + len(key))
                self._bytes += conversation.bytes
                self._open[key] = conversation
                self._by_start[key] = conversation
            elif turn.span_id in conversation.span_ids:  # a resent record (a collector's retry)
                self._counted("duplicate_turn", 1)
                return
            else:
                self._open.move_to_end(key)
                conversation.last_seen = now
            conversation.span_ids.add(turn.span_id)
            turns = conversation.turns
            if turns and turn.start_ns < turns[-1].start_ns:  # turns may arrive out of order
                turns.append(turn)
                turns.sort(key=lambda each: each.start_ns)
            else:
                turns.append(turn)
            size = turn.size + SPAN_ID_BYTES
            conversation.bytes += size
            self._bytes += size
            if len(turns) > limits.max_turns_kept:
                # The first turn says what the conversation was about, the latest where it went.
                dropped = turns.pop(1)  # the oldest after the first
                conversation.trimmed += 1
                conversation.bytes -= dropped.size  # its span id stays, to keep a resent turn once
                self._bytes -= dropped.size
                self._counted("trimmed_turn", 1)
            if turn.ends_conversation:
                self._end(key, "end_marker")
            elif conversation.turn_count >= limits.max_turns:
                self._end(key, "max_turns")
            while self._bytes > limits.max_bytes and self._open:
                self._evict_one()

    def _evict_one(self) -> None:
        key, _ = next(iter(self._open.items()))
        self._forget(key)
        self._counted("evicted", 1)

    def _forget(self, key: str) -> _Open:
        conversation = self._open.pop(key)
        del self._by_start[key]
        self._bytes -= conversation.bytes
        return conversation

    def _end(self, key: str, reason: EndReason) -> None:
        conversation = self._forget(key)
        self._ended.append(Conversation(key, tuple(conversation.turns), conversation.trimmed, reason))

    def close_due(self, now: float | None = None) -> list[Conversation]:
        """The conversations that ended by `now` (default: the clock): idle, open too long, or
        already ended by a turn."""
        limits = self.limits
        with self._lock:
            now = self.clock() if now is None else now
            for key, conversation in list(self._open.items()):
                if now - conversation.last_seen < limits.idle_timeout_s:
                    break  # the rest were active later
                self._end(key, "idle")
            for key, conversation in list(self._by_start.items()):
                if now - conversation.first_seen < limits.max_duration_s:
                    break
                self._end(key, "max_duration")
            ended, self._ended = self._ended, []
        return ended

    def close_all(self, reason: EndReason) -> list[Conversation]:
        """Every conversation still open, ended now (at shutdown, or at the end of the input)."""
        with self._lock:
            for key in list(self._open):
                self._end(key, reason)
            ended, self._ended = self._ended, []
        return ended

    def add_all(self, turns: Iterable[Turn]) -> None:
        for turn in turns:
            self.add(turn)
