"""Everything a scorer is: the protocol and decorator (`protocol`), the quick checks (`checks`),
Mastra's code scorers (`code`), and the judge scorers (`judge`, `llm`, `answer_relevancy`); every
built-in one declared once, with the factory config builds it by `type`, in `declarations`.

Factories here must not import heavy dependencies (litellm) at module import: only when a
scorer is actually built.
"""

from __future__ import annotations

from otel_scorers.scorers import checks, protocol
from otel_scorers.scorers.answer_relevancy import answer_relevancy
from otel_scorers.scorers.code import (
    completeness,
    content_similarity,
    keyword_coverage,
    textual_difference,
    tone,
    tool_call_accuracy,
    trajectory_accuracy,
)
from otel_scorers.scorers.conversation import multi_turn
from otel_scorers.scorers.llm import ask_judge, llm_scorer
from otel_scorers.scorers.rules.catalogue import (
    answer_similarity,
    bias,
    context_precision,
    context_recall,
    context_relevance,
    faithfulness,
    hallucination,
    noise_sensitivity,
    prompt_alignment,
    rubric,
    summarization,
    tool_call_accuracy_llm,
    toxicity,
    trajectory_accuracy_llm,
)

__all__ = [
    "answer_relevancy",
    "answer_similarity",
    "ask_judge",
    "bias",
    "checks",
    "completeness",
    "content_similarity",
    "context_precision",
    "context_recall",
    "context_relevance",
    "faithfulness",
    "hallucination",
    "keyword_coverage",
    "llm_scorer",
    "multi_turn",
    "noise_sensitivity",
    "prompt_alignment",
    "protocol",
    "rubric",
    "summarization",
    "textual_difference",
    "tone",
    "tool_call_accuracy",
    "tool_call_accuracy_llm",
    "toxicity",
    "trajectory_accuracy",
    "trajectory_accuracy_llm",
]
