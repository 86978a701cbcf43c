"""Conversations: the runs that share a conversation id, scored once when the conversation ends.

A run's conversation id is read as the run is built (`otel_scorers.runs.conversation_id`); a turn, the small
record of a run a conversation keeps, and the conversation are `otel_scorers.conversation_turns`
(beside the run model, which scorers read too); `stage` holds open conversations within bounds and decides
when each has ended; `scheduler` scores the ended ones on the loop that scores the runs, their scores
through the pipeline's `Emission` (`emit_conversation`); `counts` tallies what became of them;
`turn_logs` carries turns between processes as OTLP log records.
"""

from otel_scorers.conversation_turns import Conversation, ToolSummary, Turn
from otel_scorers.conversations.scoring import ConversationBinding, bind_conversation
from otel_scorers.conversations.source import ConversationSettings
from otel_scorers.conversations.stage import StageLimits

__all__ = [
    "Conversation",
    "ConversationBinding",
    "ConversationSettings",
    "StageLimits",
    "ToolSummary",
    "Turn",
    "bind_conversation",
]
