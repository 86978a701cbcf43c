"""user_frustration: how often the user had to ask again for the same thing.

A user who rephrases an earlier request was not served the first time. Each user turn after the
first is compared with the user's earlier turns by rapidfuzz's token-sort ratio (word order and
case aside); a turn at least `similarity` (0..1) alike to an earlier one is a repeat. The value is
the share of those later turns that are repeats: 0 none, 1 every one. Higher is worse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz import fuzz

from otel_scorers.conversation_turns import Conversation
from otel_scorers.model import Score

_WORDS = re.compile(r"\w+")
DEFAULT_SIMILARITY = 0.75


def _normal(text: str) -> str:
    return " ".join(_WORDS.findall(text.lower()))


@dataclass(frozen=True, slots=True)
class UserFrustration:
    similarity: float = DEFAULT_SIMILARITY
    name: str = "user_frustration"
    uses_judge: bool = False
    higher_is_worse: bool = True

    def __post_init__(self) -> None:
        if not 0.0 < self.similarity <= 1.0:
            raise ValueError(f"similarity must be in (0, 1], got {self.similarity}")

    def score(self, conversation: Conversation) -> Score:
        asked = [_normal(turn.input) for turn in conversation.turns if turn.input and turn.input.strip()]
        if len(asked) < 2:
            return Score(self.name, skipped="fewer than two user turns carried their text")
        cutoff = self.similarity * 100
        repeats: list[int] = []
        for index in range(1, len(asked)):
            best = max(fuzz.token_sort_ratio(asked[index], earlier) for earlier in asked[:index])
            if best >= cutoff:
                repeats.append(index + 1)
        later = len(asked) - 1
        reason = f"the user asked again for an earlier request in {len(repeats)} of {later} later turns" + (
            f" (turns {', '.join(map(str, repeats))})" if repeats else ""
        )
        return Score(
            self.name,
            value=len(repeats) / later,
            reason=reason,
            details={"repeated_turns": repeats, "user_turns": len(asked)},
        )
