"""Evaluation spans and events written straight as OTLP protobuf (`otlp_encode`) and sent by an
`OtlpScoreExport`: what arrives is what the SDK path sends, for a fraction of its CPU."""

from __future__ import annotations

import time
from collections.abc import Sequence
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
from otel_scorers.emission.outputs import SafePoint
from otel_scorers.model import AgentRun, Score
from otel_scorers.otlp.encode import (
    ScoreParts,
    evaluation_records,
    score_parts,
    span_links,
)
from otel_scorers.otlp.score_export import EncodedScores, OtlpScoreExport

#: Most written parts remembered (unique explanations, a judge's, would grow the cache).
_MAX_WRITTEN = 4096
#: Scores written from remembered parts between two calls of the engine's safe point (about
#: 2 µs each); a score whose parts are written afresh (tens of µs for a judge's explanation)
#: has one before it.
_REMEMBERED_PER_SAFE_POINT = 8


class OtlpOutput:
    """Each run's scores written as one `EncodedScores` item for `export`. The evaluation spans
    carry the resource of `tracer_provider` (else the global provider's), read when the first
    scores are sent, unless the export was given its own."""

    def __init__(self, export: OtlpScoreExport, tracer_provider: TracerProviderApi | None = None) -> None:
        self.export = export
        self._tracer_provider = tracer_provider
        self._started = False
        self._written: dict[tuple[Any, ...], ScoreParts] = {}
        self._safe_point: SafePoint | None = None

    def yield_with(self, safe_point: SafePoint) -> None:
        """Called before each score whose parts are written afresh and after every few written
        from remembered ones, as `SdkOutput` before each span and event: a run of many fresh
        verdicts (a judge's explanations, a conversation's scores) is long work."""
        self._safe_point = safe_point

    def emit(self, run: AgentRun, scores: Sequence[Score]) -> None:
        now = time.time_ns()
        self._send(run.trace_id, run.span_id, now, self._run_parts(run, scores, now))

    def emit_conversation(self, conversation: Conversation, scores: Sequence[Score]) -> None:
        """In the trace of the conversation's last run, each span linked to every kept turn's run
        (written afresh: a conversation's attributes never repeat)."""
        links = span_links([(turn.trace_id, turn.span_id) for turn in conversation.turns])
        now = time.time_ns()
        safe_point = self._safe_point
        scored = []
        for score in scores:
            if safe_point is not None:
                safe_point()
            error = error_description(score) if score.error is not None else None
            attributes = conversation_attributes(conversation, score)
            parts = score_parts(
                f"evaluate {score.scorer}", attributes, error, links, event_name=EVALUATION_EVENT
            )
            scored.append((parts, *span_timing(score, now)))
        last = conversation.last
        self._send(last.trace_id, last.span_id, now, scored)

    def _send(
        self,
        trace_id: int,
        span_id: int,
        now: int,
        scored: Sequence[tuple[ScoreParts, int, int]],
    ) -> None:
        """`scored`: each score's written parts, with its span's start and end."""
        if not self._started:
            self.export.start(_resource_of(self._tracer_provider or trace.get_tracer_provider()))
            self._started = True
        spans, logs = evaluation_records(
            trace_id.to_bytes(16, "big"), span_id.to_bytes(8, "big"), now, EVALUATION_EVENT, scored
        )
        self.export.submit(EncodedScores(spans, logs, len(scored)))

    def flush(self) -> None:
        """Nothing held here: the export batches on its own thread."""

    def behind(self) -> bool:
        return self.export.backlog() > 0.5

    def _run_parts(
        self, run: AgentRun, scores: Sequence[Score], now: int
    ) -> list[tuple[ScoreParts, int, int]]:
        """The written parts of each score's span and event, made once per scorer, verdict and
        run attributes they carry (a check's results repeat run after run), with its span's
        start and end."""
        written = self._written
        safe_point = self._safe_point
        agent_name = run.agent_name
        sources = tuple(run.text_sources.items()) if run.text_sources else ()
        found = []
        remembered = 0
        for score in scores:
            key: tuple[Any, ...] = (
                score.scorer,
                score.value,
                score.label,
                score.reason,
                score.error,
                score.skipped,
                score.usage,
                score.sampling_probability,
                score.evaluator_version,
                agent_name,
                sources,
            )
            try:
                parts = written.get(key)
            except TypeError:  # an unhashable field: write it without remembering
                key, parts = (), None
            if parts is None:
                if safe_point is not None:
                    safe_point()
                parts = _new_parts(run, score)
                if key:
                    if len(written) >= _MAX_WRITTEN:
                        written.clear()
                    written[key] = parts
            elif safe_point is not None:
                remembered += 1
                if remembered % _REMEMBERED_PER_SAFE_POINT == 0:
                    safe_point()
            # `span_timing`'s rule, inline: the call would cost more than the rest of the timing.
            start_ns = score.start_ns or now
            found.append((parts, start_ns, start_ns + int(score.duration_s * 1e9)))
        return found


def _new_parts(run: AgentRun, score: Score) -> ScoreParts:
    error = error_description(score) if score.error is not None else None
    return score_parts(
        f"evaluate {score.scorer}", evaluation_attributes(run, score), error, event_name=EVALUATION_EVENT
    )


def _resource_of(provider: TracerProviderApi) -> Resource | None:
    resource = getattr(provider, "resource", None)  # the SDK's TracerProvider has one
    return resource if isinstance(resource, Resource) else None
