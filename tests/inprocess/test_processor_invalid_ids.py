"""Spans whose ids are not OTLP's, made by an id generator of the agent's through the real SDK
with the processor attached: a trace id 0 or past 128 bits, a span id 0 or past 64 bits. Each is
left out of scoring, counted and logged naming it; the run ended beside it is scored."""

from __future__ import annotations

import logging

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator

from otel_scorers import ScoringSpanProcessor, checks
from otel_scorers.span_record import OWN_SCOPE
from otel_scorers.throttled_log import ThrottledLog

from ..conftest import Telemetry

#: (which id, the value the generator gives): none of them fits OTLP's 16 and 8 bytes.
INVALID = [("trace", 0), ("trace", 2**128), ("trace", 2**300), ("span", 0), ("span", 2**64)]


class Generator(IdGenerator):
    """Random ids, except the kind of id `bad` names while `bad` is set."""

    def __init__(self, which: str, value: int) -> None:
        self.which, self.value, self.bad = which, value, False
        self.random = RandomIdGenerator()

    def generate_trace_id(self) -> int:
        return self.value if self.bad and self.which == "trace" else self.random.generate_trace_id()

    def generate_span_id(self) -> int:
        return self.value if self.bad and self.which == "span" else self.random.generate_span_id()


@pytest.mark.parametrize(("which", "value"), INVALID)
def test_a_run_span_with_invalid_ids_is_counted_and_logged_and_the_next_run_is_scored(
    telemetry: Telemetry,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    which: str,
    value: int,
) -> None:
    # Said at most once a minute: each case starts with the warning not yet said.
    monkeypatch.setattr("otel_scorers.inprocess.invalid_ids.throttled", ThrottledLog())
    generator = Generator(which, value)
    provider = TracerProvider(id_generator=generator)
    processor = ScoringSpanProcessor(
        [checks.includes("ok")],
        tracer_provider=telemetry.tracer_provider,
        meter_provider=telemetry.meter_provider,
        logger_provider=telemetry.logger_provider,
    )
    provider.add_span_processor(processor)
    telemetry.export_spans_directly()
    tracer = provider.get_tracer("agent")
    caplog.set_level(logging.WARNING, logger="otel_scorers")
    for agent in ("bad", "good"):
        generator.bad = agent == "bad"
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}]',
        }
        with tracer.start_as_current_span(f"invoke_agent {agent}", attributes=attributes):
            pass  # raising here would be raising into the agent
    assert processor.force_flush(10_000)
    provider.shutdown()

    scored = [
        span.attributes["gen_ai.agent.name"]
        for span in telemetry.finished_spans()
        if span.instrumentation_scope.name == OWN_SCOPE
    ]
    assert scored == ["good"]
    assert telemetry.counter("otel_scorers.spans.dropped", otel_scorers__reason="invalid_id") == 1
    assert "span 'invoke_agent bad' has an invalid trace_id or span_id" in caplog.text
    # Its trace is not also said to hold no agent run: its span was counted once, as dropped.
    assert telemetry.counter("otel_scorers.traces.no_run") == 0
