"""Conversation scorers: scored once per conversation, when it ends (`conversations.scorers` in
the config file). Zero-LLM: `turns`, `tool_error_rate`, `user_frustration`. Judged, one call
per conversation each, batched together when the judge batches: `multi_turn` (a criterion),
`knowledge_retention`, `conversation_completeness`, `role_adherence`, `conversation_relevancy`.
Each judged factory takes `model`, `scale`, `threshold` and `judge` as run-level ones do.
"""

from __future__ import annotations

from typing import Any

from otel_scorers.scorers.conversation.counts import ToolErrorRate, Turns
from otel_scorers.scorers.conversation.frustration import DEFAULT_SIMILARITY, UserFrustration
from otel_scorers.scorers.conversation.judged import (
    ConversationCompleteness,
    ConversationJudged,
    ConversationRelevancy,
    ConversationRule,
    KnowledgeRetention,
    RoleAdherence,
)
from otel_scorers.scorers.conversation.multi_turn import MultiTurn
from otel_scorers.scorers.conversation.protocol import ConversationScorer
from otel_scorers.scorers.judge import Judge, JudgeConfig, as_judge, require_litellm
from otel_scorers.scorers.rules.base import JudgedScorer

JudgeArg = Judge | JudgeConfig | None


def _judged(
    rule: ConversationRule[Any], model: str | None, scale: float, threshold: float | None, judge: JudgeArg
) -> ConversationJudged:
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    require_litellm(rule.kind)
    the_judge = as_judge(judge)
    scorer = JudgedScorer(rule, the_judge, the_judge.resolve_model(model), scale=scale, threshold=threshold)  # type: ignore[arg-type]
    return ConversationJudged(scorer)


def multi_turn(
    criterion: str,
    model: str | None = None,
    scale: float = 1.0,
    threshold: float | None = None,
    judge: JudgeArg = None,
) -> ConversationJudged:
    """1 when the conversation, taken as a whole, meets `criterion`."""
    if not criterion.strip():
        raise ValueError("multi_turn needs a criterion")
    return _judged(MultiTurn(criterion), model, scale, threshold, judge)


def knowledge_retention(
    model: str | None = None, scale: float = 1.0, threshold: float | None = None, judge: JudgeArg = None
) -> ConversationJudged:
    """The share of the agent's later turns that keep to what the user said before."""
    return _judged(KnowledgeRetention(), model, scale, threshold, judge)


def conversation_completeness(
    model: str | None = None, scale: float = 1.0, threshold: float | None = None, judge: JudgeArg = None
) -> ConversationJudged:
    """The share of the user's requests that the conversation fulfilled by its end."""
    return _judged(ConversationCompleteness(), model, scale, threshold, judge)


def role_adherence(
    role: str,
    model: str | None = None,
    scale: float = 1.0,
    threshold: float | None = None,
    judge: JudgeArg = None,
) -> ConversationJudged:
    """The share of the agent's turns that keep to `role`."""
    if not role.strip():
        raise ValueError("role_adherence needs the agent's role")
    return _judged(RoleAdherence(role), model, scale, threshold, judge)


def conversation_relevancy(
    model: str | None = None, scale: float = 1.0, threshold: float | None = None, judge: JudgeArg = None
) -> ConversationJudged:
    """The share of the agent's turns that answer what the user said, in context."""
    return _judged(ConversationRelevancy(), model, scale, threshold, judge)


def turns() -> Turns:
    """The number of turns the conversation had."""
    return Turns()


def tool_error_rate() -> ToolErrorRate:
    """The share of the conversation's tool calls that failed (higher is worse)."""
    return ToolErrorRate()


def user_frustration(similarity: float = DEFAULT_SIMILARITY) -> UserFrustration:
    """The share of the user's later turns that repeat an earlier request (higher is worse)."""
    return UserFrustration(similarity)


__all__ = [
    "ConversationScorer",
    "conversation_completeness",
    "conversation_relevancy",
    "knowledge_retention",
    "multi_turn",
    "role_adherence",
    "tool_error_rate",
    "turns",
    "user_frustration",
]
