"""Conversations: the runs that share a conversation id, scored once when the conversation ends.

`identity` finds a run's conversation id in whatever convention carries one; `turns` is the small
record of a run a conversation keeps; `stage` holds open conversations within bounds and decides
when each has ended; `lane` scores the ended ones, off the caller's thread; `emission` writes
their scores as telemetry; `turn_logs` carries turns between processes as OTLP log records.
"""

from otel_scorers.conversations.pipeline import ConversationSettings
from otel_scorers.conversations.scoring import ConversationBinding, bind_conversation
from otel_scorers.conversations.stage import StageLimits
from otel_scorers.conversations.turns import Conversation, ToolSummary, Turn

__all__ = [
    "Conversation",
    "ConversationBinding",
    "ConversationSettings",
    "StageLimits",
    "ToolSummary",
    "Turn",
    "bind_conversation",
]
