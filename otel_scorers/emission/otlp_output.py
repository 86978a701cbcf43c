"""Evaluation spans and events written straight as OTLP protobuf (`otlp_encode`) and sent by an
`OtlpScoreExport`: what arrives is what the SDK path sends, for a fraction of its CPU."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.trace import TracerProvider as TracerProviderApi

from otel_scorers.conversation_turns import Conversation
from otel_scorers.emission.attributes import (
    EVALUATION_EVENT,
    conversation_attributes,
    error_description,
    evaluation_attributes,
    span_timing,
)
from otel_scorers.model import AgentRun, Score
from otel_scorers.otlp.encode import (
    ScoreParts,
    evaluation_log,
    evaluation_span,
    log_context,
    score_parts,
    span_ids_around,
    span_links,
)
from otel_scorers.otlp.score_export import EncodedScores, OtlpScoreExport

#: Most written parts remembered (unique explanations, a judge's, would grow the cache).
_MAX_WRITTEN = 4096


class OtlpOutput:
    """Each run's scores written as one `EncodedScores` item for `export`. The evaluation spans
    carry the resource of `tracer_provider` (else the global provider's), read when the first
    scores are sent, unless the export was given its own."""

    def __init__(self, export: OtlpScoreExport, tracer_provider: TracerProviderApi | None = None) -> None:
        self.export = export
        self._tracer_provider = tracer_provider
        self._started = False
        self._written: dict[tuple[Any, ...], ScoreParts] = {}

    def emit(self, run: AgentRun, scores: Sequence[Score]) -> None:
        self._send(run.trace_id, run.span_id, scores, lambda score: self._parts(run, score))

    def emit_conversation(self, conversation: Conversation, scores: Sequence[Score]) -> None:
        """In the trace of the conversation's last run, each span linked to every kept turn's run
        (written afresh: a conversation's attributes never repeat)."""
        links = span_links([(turn.trace_id, turn.span_id) for turn in conversation.turns])

        def parts(score: Score) -> ScoreParts:
            error = error_description(score) if score.error is not None else None
            attributes = conversation_attributes(conversation, score)
            return score_parts(
                f"evaluate {score.scorer}", attributes, error, links, event_name=EVALUATION_EVENT
            )

        last = conversation.last
        self._send(last.trace_id, last.span_id, scores, parts)

    def _send(
        self,
        trace_id_int: int,
        span_id: int,
        scores: Sequence[Score],
        parts_of: Callable[[Score], ScoreParts],
    ) -> None:
        if not self._started:
            self.export.start(_resource_of(self._tracer_provider or trace.get_tracer_provider()))
            self._started = True
        now = time.time_ns()
        trace_id, parent = trace_id_int.to_bytes(16, "big"), span_id.to_bytes(8, "big")
        event_context = log_context(trace_id, parent, now, EVALUATION_EVENT)
        trace_head, parent_field = span_ids_around(trace_id, parent)
        spans: list[bytes] = []
        logs: list[bytes] = []
        for score in scores:
            parts = parts_of(score)
            start_ns, end_ns = span_timing(score, now)
            evaluation_span(spans, trace_head, _new_span_id(), parent_field, parts, start_ns, end_ns)
            evaluation_log(logs, end_ns, parts, event_context)
        self.export.submit(EncodedScores(b"".join(spans), b"".join(logs), len(scores)))

    def flush(self) -> None:
        """Nothing held here: the export batches on its own thread."""

    def behind(self) -> bool:
        return self.export.backlog() > 0.5

    def _parts(self, run: AgentRun, score: Score) -> ScoreParts:
        """The written parts of a score's span and event, made once per scorer and verdict: a
        check's results repeat run after run."""
        key = (
            score.scorer,
            score.value,
            score.label,
            score.reason,
            score.error,
            score.skipped,
            score.usage,
            run.agent_name,
            score.sampling_probability,
            score.evaluator_version,
        )
        try:
            parts = self._written.get(key)
        except TypeError:  # an unhashable field: write it without remembering
            return _new_parts(run, score)
        if parts is None:
            if len(self._written) >= _MAX_WRITTEN:
                self._written.clear()
            parts = self._written[key] = _new_parts(run, score)
        return parts


def _new_parts(run: AgentRun, score: Score) -> ScoreParts:
    error = error_description(score) if score.error is not None else None
    return score_parts(
        f"evaluate {score.scorer}", evaluation_attributes(run, score), error, event_name=EVALUATION_EVENT
    )


def _resource_of(provider: TracerProviderApi) -> Resource | None:
    resource = getattr(provider, "resource", None)  # the SDK's TracerProvider has one
    return resource if isinstance(resource, Resource) else None


def _new_span_id() -> bytes:
    # As the SDK's RandomIdGenerator: 64 random bits, never the invalid id 0.
    span_id = random.getrandbits(64)
    while span_id == 0:
        span_id = random.getrandbits(64)
    return span_id.to_bytes(8, "big")
