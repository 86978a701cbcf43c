"""The processor reads some of the SDK span's private fields on the agent's thread, for speed
(`assembler.py`, `span_record.py`), with the span's public properties as the fallback. A span
that offers only its public API (another SDK version, a wrapped span) is scored the same."""

from __future__ import annotations

from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from otel_scorers import ScoringSpanProcessor, checks
from otel_scorers.demos.example_agent import DEMO_RUNS, ExampleAgent

from ..conftest import Telemetry, make_telemetry


class PublicOnly:
    """A span whose private fields are out of reach: only its public properties answer."""

    def __init__(self, span: ReadableSpan) -> None:
        object.__setattr__(self, "wrapped", span)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.wrapped, name)


class PublicSpansOnly(SpanProcessor):
    """Hands the scoring processor each span behind `PublicOnly`."""

    def __init__(self, processor: ScoringSpanProcessor) -> None:
        self.processor = processor

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.processor.on_start(PublicOnly(span), parent_context)  # type: ignore[arg-type]

    def on_end(self, span: ReadableSpan) -> None:
        self.processor.on_end(PublicOnly(span))  # type: ignore[arg-type]

    def shutdown(self) -> None:
        self.processor.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.processor.force_flush(timeout_millis)


def scores_of(telemetry: Telemetry, public_only: bool) -> list[tuple[str, Any, Any]]:
    scorers = [checks.no_tool_errors(), checks.called_tool("get_weather"), checks.includes("°C")]
    processor = ScoringSpanProcessor(scorers, **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(PublicSpansOnly(processor) if public_only else processor)
    telemetry.export_spans_directly()
    agent = ExampleAgent(tracer=telemetry.tracer_provider.get_tracer("example-agent"))
    for script in DEMO_RUNS:
        agent.run(script)
    assert processor.force_flush(10_000)
    processor.shutdown()
    found = []
    for span in telemetry.finished_spans():
        attributes = dict(span.attributes or {})
        if span.name.startswith("evaluate "):
            found.append(
                (
                    str(attributes["gen_ai.evaluation.name"]),
                    attributes.get("gen_ai.evaluation.score.value"),
                    attributes.get("gen_ai.evaluation.score.label"),
                )
            )
    return sorted(found, key=repr)


def test_spans_with_only_their_public_api_are_scored_as_sdk_spans_are(telemetry: Telemetry) -> None:
    direct = scores_of(telemetry, public_only=False)
    other = make_telemetry()
    try:
        through_public_api = scores_of(other, public_only=True)
    finally:
        other.tracer_provider.shutdown()
    assert direct and len(direct) >= 3 * (len(DEMO_RUNS) - 1)
    assert through_public_api == direct
