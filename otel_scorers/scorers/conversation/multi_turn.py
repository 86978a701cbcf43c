"""multi_turn: whether a whole conversation satisfied a criterion, judged once when it ended
(a conversation scorer: see `otel_scorers.scorers.conversation`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from otel_scorers.conversation_turns import Conversation
from otel_scorers.model import Score
from otel_scorers.scorers.conversation.judged import ConversationRule, transcript
from otel_scorers.scorers.rules.base import Task


class TurnsReply(BaseModel):
    satisfied: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class MultiTurn(ConversationRule[TurnsReply]):
    criterion: str = ""

    kind = "multi_turn"
    shape = TurnsReply
    instructions = (
        "Do the agent's turns of this conversation (oldest first), taken together, satisfy the criterion?"
    )
    reply_format = '{"satisfied":true,"reason":"..."}'

    @property
    def version(self) -> str:
        return "multi_turn/3"

    def prepare_conversation(self, conversation: Conversation) -> Task | Score:
        blocks, facts = transcript(conversation)
        return Task((("criterion", self.criterion), *blocks), facts)

    def value(self, reply: TurnsReply, task: Task) -> tuple[float, dict[str, Any]]:
        return (1.0 if reply.satisfied else 0.0), {"turns": task.facts["turns"], "satisfied": reply.satisfied}
