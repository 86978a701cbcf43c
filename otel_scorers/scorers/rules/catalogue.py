"""The judged scorers' public factories, by the config `type` of the same name.

Every factory takes `model` (any litellm model string; default: the judge config's), `scale`
(the maximum score), `threshold` (label pass/fail; for the higher-is-worse scorers
hallucination, bias and toxicity, pass means at most the threshold), `steps` (1: one call; or
Mastra's number of calls) and `judge` (a shared `Judge` or its config). Scorers that need a
reference take it as text or as a path into the run (`<name>_from: attributes.<key>`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from otel_scorers.scorers.judge import Judge, JudgeConfig, as_judge, require_litellm
from otel_scorers.scorers.rules.answer_similarity import AnswerSimilarity
from otel_scorers.scorers.rules.base import JudgedScorer, Reference, Rule
from otel_scorers.scorers.rules.bias import BIAS
from otel_scorers.scorers.rules.context_precision import ContextPrecision
from otel_scorers.scorers.rules.context_recall import context_recall_rule
from otel_scorers.scorers.rules.context_relevance import ContextRelevance
from otel_scorers.scorers.rules.faithfulness import FAITHFULNESS
from otel_scorers.scorers.rules.hallucination import HALLUCINATION
from otel_scorers.scorers.rules.noise_sensitivity import NoiseSensitivity
from otel_scorers.scorers.rules.prompt_alignment import PromptAlignment
from otel_scorers.scorers.rules.rubric import Rubric, as_criteria
from otel_scorers.scorers.rules.summarization import Summarization
from otel_scorers.scorers.rules.tool_call_accuracy_llm import ToolCallAccuracyLLM, as_tool_list
from otel_scorers.scorers.rules.toxicity import TOXICITY
from otel_scorers.scorers.rules.trajectory_accuracy_llm import TrajectoryAccuracyLLM

JudgeArg = Judge | JudgeConfig | None


def _build(
    rule: Rule[Any], model: str | None, scale: float, threshold: float | None, steps: int, judge: JudgeArg
) -> JudgedScorer[Any]:
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    if steps not in (1, rule.mastra_steps):
        raise ValueError(
            f"steps must be 1 (one judge call) or {rule.mastra_steps} (Mastra's calls) for {rule.kind}, got {steps}"
        )
    require_litellm(rule.kind)
    the_judge = as_judge(judge)
    return JudgedScorer(
        rule, the_judge, the_judge.resolve_model(model), scale=scale, threshold=threshold, steps=steps
    )


def faithfulness(
    model: str | None = None,
    scale: float = 1.0,
    threshold: float | None = None,
    steps: Literal[1, 3] = 1,
    judge: JudgeArg = None,
) -> JudgedScorer[Any]:
    """The share of the answer's claims that the run's context (tool results, documents) supports."""
    return _build(FAITHFULNESS, model, scale, threshold, steps, judge)


def hallucination(
    model: str | None = None,
    scale: float = 1.0,
    threshold: float | None = None,
    steps: Literal[1, 3] = 1,
    judge: JudgeArg = None,
) -> JudgedScorer[Any]:
    """The share of the answer's claims that contradict or go beyond its context (higher is worse)."""
    return _build(HALLUCINATION, model, scale, threshold, steps, judge)


def bias(
    model: str | None = None,
    scale: float = 1.0,
    threshold: float | None = None,
    steps: Literal[1, 3] = 1,
    judge: JudgeArg = None,
) -> JudgedScorer[Any]:
    """The share of the answer's opinions that are biased (higher is worse)."""
    return _build(BIAS, model, scale, threshold, steps, judge)


def toxicity(
    model: str | None = None,
    scale: float = 1.0,
    threshold: float | None = None,
    steps: Literal[1, 2] = 1,
    judge: JudgeArg = None,
) -> JudgedScorer[Any]:
    """The share of the answer's statements that are toxic (higher is worse)."""
    return _build(TOXICITY, model, scale, threshold, steps, judge)


def answer_similarity(
    reference: str | None = None,
    reference_from: str | None = None,
    model: str | None = None,
    scale: float = 1.0,
    threshold: float | None = None,
    steps: Literal[1, 3] = 1,
    judge: JudgeArg = None,
) -> JudgedScorer[Any]:
    """How much of a reference answer (text, or `reference_from: attributes.<key>`) the answer carries."""
    rule = AnswerSimilarity(Reference.of(reference, reference_from, "reference"))
    return _build(rule, model, scale, threshold, steps, judge)


def context_recall(
    reference: str | None = None,
    reference_from: str | None = None,
    model: str | None = None,
    scale: float = 1.0,
    threshold: float | None = None,
    steps: Literal[1, 3] = 1,
    judge: JudgeArg = None,
) -> JudgedScorer[Any]:
    """The share of a reference answer's claims that the run's context supports."""
    rule = context_recall_rule(Reference.of(reference, reference_from, "reference"))
    return _build(rule, model, scale, threshold, steps, judge)


def context_precision(
    model: str | None = None,
    scale: float = 1.0,
    threshold: float | None = None,
    steps: Literal[1, 2] = 1,
    judge: JudgeArg = None,
) -> JudgedScorer[Any]:
    """Whether the context items relevant to the question come first (mean average precision)."""
    return _build(ContextPrecision(), model, scale, threshold, steps, judge)


def context_relevance(
    model: str | None = None,
    scale: float = 1.0,
    threshold: float | None = None,
    steps: Literal[1, 2] = 1,
    judge: JudgeArg = None,
) -> JudgedScorer[Any]:
    """How relevant the run's context was to the question, with penalties for what went unused or missing."""
    return _build(ContextRelevance(), model, scale, threshold, steps, judge)


def prompt_alignment(
    mode: Literal["user", "system"] = "user",
    model: str | None = None,
    scale: float = 1.0,
    threshold: float | None = None,
    steps: Literal[1, 2] = 1,
    judge: JudgeArg = None,
) -> JudgedScorer[Any]:
    """How well the answer follows the user's request (or, `mode: system`, the system instructions)."""
    return _build(PromptAlignment(mode), model, scale, threshold, steps, judge)


def noise_sensitivity(
    baseline: str | None = None,
    baseline_from: str | None = None,
    model: str | None = None,
    scale: float = 1.0,
    threshold: float | None = None,
    steps: Literal[1, 2] = 1,
    judge: JudgeArg = None,
) -> JudgedScorer[Any]:
    """How well the answer to a noisy input held up against a noise-free baseline answer."""
    rule = NoiseSensitivity(Reference.of(baseline, baseline_from, "baseline"))
    return _build(rule, model, scale, threshold, steps, judge)


def summarization(
    source: str | None = None,
    source_from: str | None = None,
    max_questions: int = 10,
    model: str | None = None,
    scale: float = 1.0,
    threshold: float | None = None,
    steps: Literal[1, 3] = 1,
    judge: JudgeArg = None,
) -> JudgedScorer[Any]:
    """min(faithfulness to the source, coverage of it) of the answer as a summary; the source is the
    run's input unless given."""
    if max_questions < 1:
        raise ValueError(f"max_questions must be at least 1, got {max_questions}")
    rule = Summarization(Reference.of(source, source_from, "source"), max_questions)
    return _build(rule, model, scale, threshold, steps, judge)


def tool_call_accuracy_llm(
    available_tools: Sequence[str] | Mapping[str, str] | None = None,
    model: str | None = None,
    scale: float = 1.0,
    threshold: float | None = None,
    steps: Literal[1, 2] = 1,
    judge: JudgeArg = None,
) -> JudgedScorer[Any]:
    """The share of the run's tool calls the judge finds appropriate for the request."""
    return _build(ToolCallAccuracyLLM(as_tool_list(available_tools)), model, scale, threshold, steps, judge)


def trajectory_accuracy_llm(
    expected: str | None = None,
    expected_from: str | None = None,
    model: str | None = None,
    scale: float = 1.0,
    threshold: float | None = None,
    steps: Literal[1, 2] = 1,
    judge: JudgeArg = None,
) -> JudgedScorer[Any]:
    """Whether the run's steps were the necessary ones, in order (optionally against an expected trajectory)."""
    rule = TrajectoryAccuracyLLM(Reference.of(expected, expected_from, "expected"))
    return _build(rule, model, scale, threshold, steps, judge)


def rubric(
    criteria: str | Sequence[str | Mapping[str, Any]],
    model: str | None = None,
    scale: float = 1.0,
    threshold: float | None = None,
    judge: JudgeArg = None,
) -> JudgedScorer[Any]:
    """1 when the answer meets every required criterion (`{criterion: ..., required: false}` for optional ones)."""
    return _build(Rubric(as_criteria(criteria)), model, scale, threshold, 1, judge)
