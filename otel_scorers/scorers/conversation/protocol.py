"""The conversation scorer seam: what the conversation scheduler calls once per ended conversation."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Protocol, runtime_checkable

from otel_scorers.conversation_turns import Conversation
from otel_scorers.model import Score


@runtime_checkable
class ConversationScorer(Protocol):
    """Anything with a name and a `score(conversation)` returning a `Score` (directly: it must be
    quick; or awaitable: a judge). `uses_judge`: its work is judge work, bounded as such."""

    @property
    def name(self) -> str: ...
    @property
    def uses_judge(self) -> bool: ...

    def score(self, conversation: Conversation) -> Score | Awaitable[Score]: ...
