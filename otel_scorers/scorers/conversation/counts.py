"""Zero-LLM conversation scorers that count: its turns, and how often its tools failed."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from otel_scorers.conversation_turns import Conversation
from otel_scorers.model import Score


@dataclass(frozen=True, slots=True)
class Turns:
    """The number of turns the conversation had (those trimmed to keep within bounds included)."""

    name: str = "turns"
    uses_judge: bool = False
    #: A count: its labels may be any number of turns (`label_ranges`).
    value_range: ClassVar[tuple[float, float]] = (0.0, math.inf)

    def score(self, conversation: Conversation) -> Score:
        count = conversation.turn_count
        trimmed = f" ({conversation.trimmed} not kept)" if conversation.trimmed else ""
        return Score(
            self.name,
            value=float(count),
            reason=f"{count} turn{'' if count == 1 else 's'}{trimmed}, ended by {conversation.ended_by}",
            details={"turns": count, "trimmed": conversation.trimmed, "ended_by": conversation.ended_by},
        )


@dataclass(frozen=True, slots=True)
class ToolErrorRate:
    """The share of the conversation's tool calls (in the turns kept) that did not succeed:
    failed, unfinished, or returned an error. Higher is worse; skipped without tool calls."""

    name: str = "tool_error_rate"
    uses_judge: bool = False
    higher_is_worse: bool = True

    def score(self, conversation: Conversation) -> Score:
        calls = [tool for turn in conversation.turns for tool in turn.tools]
        if not calls:
            return Score(self.name, skipped="the conversation made no tool calls")
        failed = [tool for tool in calls if tool.state != "ok"]
        names = sorted({tool.name for tool in failed})
        reason = f"{len(failed)} of {len(calls)} tool calls failed" + (
            f" ({', '.join(names)})" if names else ""
        )
        return Score(
            self.name,
            value=len(failed) / len(calls),
            reason=reason,
            details={"calls": len(calls), "failed": len(failed)},
        )
