"""What a score says in telemetry: the `gen_ai.evaluation.*` attributes of its evaluation span and
event, the attributes it puts on the run's own span, and the context its telemetry is recorded in
(same trace, the run span as parent, so that a score sits next to its run in Jaeger and metric
exemplars point at the run's trace)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from otel_scorers.conversation_turns import Conversation, bounded_conversation_id
from otel_scorers.gen_ai_names import (
    GEN_AI_CONVERSATION_ID,
    GEN_AI_EVALUATION_EXPLANATION,
    GEN_AI_EVALUATION_RESULT,
    GEN_AI_EVALUATION_SCORE_VALUE,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
)
from otel_scorers.metrics import AGENT_NAME, EVALUATION_NAME, EVALUATOR_VERSION, SCORE_LABEL
from otel_scorers.model import AgentRun, Score

EVALUATION_EVENT = GEN_AI_EVALUATION_RESULT
SCORE_VALUE = GEN_AI_EVALUATION_SCORE_VALUE
EXPLANATION = GEN_AI_EVALUATION_EXPLANATION
SKIPPED = "otel_scorers.skipped"
SAMPLING_PROBABILITY = "otel_scorers.sampling.probability"
SCORE_ATTRIBUTE_PREFIX = "otel_scorers.score."
#: `otel_scorers.run.text_source.input` / `.output`: where a run's text was derived from.
TEXT_SOURCE_PREFIX = "otel_scorers.run.text_source."
LABEL_ATTRIBUTE_PREFIX = "otel_scorers.label."
_MAX_EXPLANATION = 2000
CONVERSATION_TURNS = "otel_scorers.conversation.turns"
TRIMMED_TURNS = "otel_scorers.conversation.trimmed_turns"
ENDED_BY = "otel_scorers.conversation.ended_by"


def run_span_context(run: AgentRun) -> Context:
    """A context whose current span is the run's span, to parent evaluation spans on it."""
    parent = SpanContext(
        run.trace_id, run.span_id, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED)
    )
    return trace.set_span_in_context(NonRecordingSpan(parent))


def evaluation_attributes(run: AgentRun, score: Score) -> dict[str, Any]:
    """The `gen_ai.evaluation.*` attributes shared by the span and the event."""
    attributes: dict[str, Any] = {EVALUATION_NAME: score.scorer}
    if score.value is not None:
        attributes[SCORE_VALUE] = score.value
    if score.label is not None:
        attributes[SCORE_LABEL] = score.label
    if score.reason:
        attributes[EXPLANATION] = score.reason[:_MAX_EXPLANATION]
    if score.error is not None:
        attributes["error.type"] = score.error.type
    if score.skipped is not None:
        attributes[SKIPPED] = score.skipped
    if score.sampling_probability is not None:
        attributes[SAMPLING_PROBABILITY] = score.sampling_probability
    if score.evaluator_version is not None:
        attributes[EVALUATOR_VERSION] = score.evaluator_version
    if run.agent_name:
        attributes[AGENT_NAME] = run.agent_name
    for side, source in run.text_sources.items():  # derived, not read: where from
        attributes[TEXT_SOURCE_PREFIX + side] = source
    usage = score.usage
    if usage is not None:
        if usage.model:
            attributes[GEN_AI_REQUEST_MODEL] = usage.model
        attributes[GEN_AI_USAGE_INPUT_TOKENS] = usage.input_tokens
        attributes[GEN_AI_USAGE_OUTPUT_TOKENS] = usage.output_tokens
        if usage.cost_usd is not None:
            attributes["otel_scorers.judge.cost_usd"] = usage.cost_usd
    return attributes


def score_attributes(scores: Sequence[Score]) -> dict[str, Any]:
    """`otel_scorers.score.<scorer>` and `otel_scorers.label.<scorer>` for the run's own span.
    Each scorer's two keys are made once (`_run_span_keys`): the same strings run after run,
    their hashes kept, and pickled once per message to the receiving process (its memo)."""
    attributes: dict[str, Any] = {}
    keys_of = _RUN_SPAN_KEYS
    for score in scores:
        keys = keys_of.get(score.scorer) or _run_span_keys(score.scorer)
        if score.value is not None:
            attributes[keys[0]] = score.value
        if score.label is not None:
            attributes[keys[1]] = score.label
    return attributes


#: Each scorer's `score_attributes` keys, by its name (bindings' names: a few).
_RUN_SPAN_KEYS: dict[str, tuple[str, str]] = {}
_MAX_RUN_SPAN_KEYS = 4096


def _run_span_keys(scorer: str) -> tuple[str, str]:
    if len(_RUN_SPAN_KEYS) >= _MAX_RUN_SPAN_KEYS:
        _RUN_SPAN_KEYS.clear()
    keys = _RUN_SPAN_KEYS[scorer] = (SCORE_ATTRIBUTE_PREFIX + scorer, LABEL_ATTRIBUTE_PREFIX + scorer)
    return keys


def error_description(score: Score) -> str:
    """The status description of a failed scorer's evaluation span."""
    assert score.error is not None
    return f"{score.error.type}: {score.error.message}"


def span_timing(score: Score, now_ns: int) -> tuple[int, int]:
    """When a score's evaluation span starts and ends: as the scorer ran, else ending now."""
    start_ns = score.start_ns or now_ns
    return start_ns, start_ns + int(score.duration_s * 1e9)


def conversation_run(conversation: Conversation) -> AgentRun:
    """A conversation's scores go where its last run's would: that run as far as their
    attributes and metrics tell of it (its trace, its span, the conversation's agent)."""
    last = conversation.last
    return AgentRun(last.trace_id, last.span_id, conversation.agent_name, None, None)


def conversation_attributes(conversation: Conversation, score: Score) -> dict[str, Any]:
    """A conversation score's evaluation attributes: the run-level ones (for the conversation's
    last run) and what identifies the conversation. Never metric attributes: every conversation
    would be a new series."""
    attributes = evaluation_attributes(conversation_run(conversation), score)
    attributes[GEN_AI_CONVERSATION_ID] = bounded_conversation_id(conversation.id)[0]  # however it was made
    attributes[CONVERSATION_TURNS] = conversation.turn_count
    attributes[ENDED_BY] = conversation.ended_by
    if conversation.trimmed:
        attributes[TRIMMED_TURNS] = conversation.trimmed
    return attributes


def turn_links(conversation: Conversation) -> list[SpanContext]:
    """The run span of each kept turn, which a conversation score's evaluation span links to."""
    sampled = TraceFlags(TraceFlags.SAMPLED)
    return [
        SpanContext(turn.trace_id, turn.span_id, is_remote=True, trace_flags=sampled)
        for turn in conversation.turns
    ]
