"""multi_turn: whether a conversation, up to this run, satisfied a criterion. The earlier turns
are the runs of the same conversation (`gen_ai.conversation.id` or its equivalents) this scorer
has seen, kept in a bounded memory: bind it without sampling, or filter on the conversation."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from otel_scorers.fork_safety import renew_in_child
from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.judged.base import Ask, Task, ask_once, need_output, skipped


class TurnsReply(BaseModel):
    satisfied: bool
    reason: str = ""


class Conversations:
    """The last `max_turns` (input, output) of up to `max_conversations` conversations."""

    def __init__(self, max_conversations: int = 1000, max_turns: int = 20) -> None:
        self.max_conversations = max_conversations
        self.max_turns = max_turns
        self._turns: OrderedDict[str, list[tuple[int, int, str, str]]] = OrderedDict()
        self._lock = threading.Lock()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        self._lock = threading.Lock()

    def add(self, run: AgentRun) -> list[tuple[str, str]]:
        """Record the run and return the conversation's turns up to it, oldest first."""
        key = run.conversation_id or ""
        with self._lock:
            turns = self._turns.setdefault(key, [])
            self._turns.move_to_end(key)
            if not any(span_id == run.span_id for _, span_id, _, _ in turns):
                turns.append((run.start_ns, run.span_id, run.input or "", run.output or ""))
                turns.sort()  # runs may be scored out of order: the conversation's is by start
            del turns[: -self.max_turns]
            while len(self._turns) > self.max_conversations:
                self._turns.popitem(last=False)
            upto = next(i for i, turn in enumerate(turns) if turn[1] == run.span_id) + 1
            return [(user, agent) for _, _, user, agent in turns[:upto]]


@dataclass(frozen=True, slots=True)
class MultiTurn:
    criterion: str
    conversations: Conversations = field(default_factory=Conversations, compare=False)

    kind = "multi_turn"
    shape = TurnsReply
    mastra_steps = 1
    needs = frozenset({"output"})
    higher_is_worse = False
    instructions = (
        "Do the agent's turns of this conversation (oldest first), taken together, satisfy the criterion?"
    )
    reply_format = '{"satisfied":true,"reason":"..."}'

    @property
    def version(self) -> str:
        return "multi_turn/2"

    def prepare(self, run: AgentRun) -> Task | Score:
        early = need_output(run, self.kind)
        if early is not None:
            return early
        if run.conversation_id is None:
            return skipped(
                self.kind, "the trace does not link this run to a conversation (no conversation id)"
            )
        turns = self.conversations.add(run)
        blocks = tuple(
            (f"turn_{n}", f"user: {user}\nagent: {agent}") for n, (user, agent) in enumerate(turns, 1)
        )
        return Task((("criterion", self.criterion), *blocks), {"turns": len(turns)})

    def value(self, reply: TurnsReply, task: Task) -> tuple[float, dict[str, Any]]:
        return (1.0 if reply.satisfied else 0.0), {"turns": task.facts["turns"], "satisfied": reply.satisfied}

    def reason(self, reply: TurnsReply) -> str:
        return reply.reason.strip()

    async def steps(self, ask: Ask[Any], task: Task) -> TurnsReply:
        return await ask_once(self, ask, task)
