"""Mastra's seven code scorers: zero-LLM scores of a run's input, output and tool calls.

Semantics: `docs/code-scorers.md`; every case of its vectors (Mastra's own scores) is a test.
Each factory returns a `Check` (fast, synchronous) whose every result carries a one-line reason.
"""

from __future__ import annotations

from otel_scorers.scorers.code.completeness import completeness
from otel_scorers.scorers.code.keywords import keyword_coverage
from otel_scorers.scorers.code.text import content_similarity, textual_difference
from otel_scorers.scorers.code.tone import tone
from otel_scorers.scorers.code.tools import tool_call_accuracy, trajectory_accuracy

__all__ = [
    "completeness",
    "content_similarity",
    "keyword_coverage",
    "textual_difference",
    "tone",
    "tool_call_accuracy",
    "trajectory_accuracy",
]
