"""A turn: the small record of one run that a conversation keeps, and the conversation itself.

A turn holds what conversation scorers read (the user's input, the agent's answer, a summary of
its tool calls) and where the run is (its span context), never the run's spans: it is what
travels between processes as a log record, and what an open conversation costs in memory.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

from otel_scorers.model import AgentRun, RunStatus, ToolState

#: Longest input or output a turn keeps (characters); longer text is cut and the cut recorded.
MAX_TURN_TEXT = 4000
#: What a turn costs besides its text: its objects and its share of the stage (bytes; about what
#: bench/conversations.py measures).
TURN_OVERHEAD_BYTES = 400

#: Longest conversation id kept (characters), wherever an id enters: a run's attributes, a turn
#: record. An id is a key that every kept turn and every evaluation span repeats, and a sender
#: chooses it; a longer one becomes its first characters and a digest of the whole
#: (`bounded_conversation_id`), so that ids which differ stay apart. 256 holds a UUID, a URL-safe
#: session token or a composite "tenant/user/thread" key whole.
MAX_CONVERSATION_ID = 256
_ID_DIGEST_BYTES = 16


def bounded_conversation_id(conversation_id: str) -> tuple[str, bool]:
    """The id as kept: itself when within `MAX_CONVERSATION_ID`, else its first characters, "~"
    and the hex BLAKE2b digest of the whole (the same in every process); and whether it was cut."""
    if len(conversation_id) <= MAX_CONVERSATION_ID:
        return conversation_id, False
    digest = hashlib.blake2b(
        conversation_id.encode("utf-8", "surrogatepass"), digest_size=_ID_DIGEST_BYTES
    ).hexdigest()
    return f"{conversation_id[: MAX_CONVERSATION_ID - len(digest) - 1]}~{digest}", True


EndReason = Literal["idle", "max_duration", "max_turns", "end_marker", "shutdown", "end_of_input"]


@dataclass(frozen=True, slots=True)
class ToolSummary:
    """One tool call of a turn: its name and how it went."""

    name: str
    state: ToolState = "ok"
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """One run of a conversation. `ends_conversation`: the run matched the end predicate.
    `id_cut`: the conversation id was longer than `MAX_CONVERSATION_ID` and is its bounded form."""

    conversation_id: str
    trace_id: int
    span_id: int
    start_ns: int
    end_ns: int
    agent_name: str | None = None
    input: str | None = None
    output: str | None = None
    tools: tuple[ToolSummary, ...] = ()
    status: RunStatus = "unset"
    ends_conversation: bool = False
    truncated: bool = False
    id_cut: bool = False

    @property
    def size(self) -> int:
        """About what the turn holds in memory, in bytes."""
        text = (
            len(self.conversation_id)
            + len(self.agent_name or "")
            + len(self.input or "")
            + len(self.output or "")
        )
        return (
            TURN_OVERHEAD_BYTES
            + text
            + sum(64 + len(tool.name) + len(tool.error or "") for tool in self.tools)
        )


def _cut(text: str | None, limit: int) -> tuple[str | None, bool]:
    if text is None or len(text) <= limit:
        return text, False
    return text[:limit], True


def turn_of(run: AgentRun, ends_conversation: bool = False, max_text: int = MAX_TURN_TEXT) -> Turn | None:
    """The run as a turn of its conversation; None when the run names no conversation."""
    if not run.conversation_id:
        return None
    conversation_id, id_cut = bounded_conversation_id(run.conversation_id)
    user, cut_input = _cut(run.input, max_text)
    agent, cut_output = _cut(run.output, max_text)
    return Turn(
        conversation_id=conversation_id,
        trace_id=run.trace_id,
        span_id=run.span_id,
        start_ns=run.start_ns,
        end_ns=run.end_ns,
        agent_name=run.final_agent or run.agent_name,
        input=user,
        output=agent,
        tools=tuple(
            ToolSummary(call.name, call.state, (call.error or "")[:200] or None) for call in run.tool_calls
        ),
        status=run.status,
        ends_conversation=ends_conversation,
        truncated=cut_input or cut_output,
        id_cut=id_cut,
    )


@dataclass(frozen=True, slots=True)
class Conversation:
    """An ended conversation as its scorers see it: its turns in start order (the first and the
    last always among them), how many turns were left out to keep within bounds, and what ended it."""

    id: str
    turns: tuple[Turn, ...]
    trimmed: int = 0
    ended_by: EndReason = "idle"

    @property
    def last(self) -> Turn:
        return self.turns[-1]

    @property
    def turn_count(self) -> int:
        """Every turn the conversation had, those trimmed included."""
        return len(self.turns) + self.trimmed

    @property
    def agent_name(self) -> str | None:
        return next((turn.agent_name for turn in reversed(self.turns) if turn.agent_name), None)
