"""The evaluation spans the processor emits in-process are in the trace of the run they score:
they never take a place among the spans it buffers for that trace (`max_spans_per_trace`)."""

from __future__ import annotations

from typing import Any

from otel_scorers import ScoringSpanProcessor, checks
from otel_scorers.demos.example_agent import ExampleAgent, ScriptedRun
from otel_scorers.span_record import OWN_SCOPE

from ..conftest import RunRecorder, Telemetry
from ..waiting import wait_until

PARIS = ScriptedRun(
    "What's the weather in Paris?", [("get_weather", {"city": "Paris"})], "Sunny, 21°C in Paris."
)
#: The spans of the second run besides its own: as many as the trace may buffer.
TOOL_SPANS = 4


def _evaluation_spans(telemetry: Telemetry) -> list[Any]:
    return [
        span
        for span in telemetry.finished_spans()
        if span.instrumentation_scope is not None and span.instrumentation_scope.name == OWN_SCOPE
    ]


def test_a_runs_evaluation_spans_cost_a_later_run_of_its_trace_no_buffered_span(telemetry: Telemetry) -> None:
    recorder = RunRecorder()
    processor = ScoringSpanProcessor(
        [recorder, checks.no_tool_errors()], max_spans_per_trace=TOOL_SPANS, **telemetry.providers()
    )
    telemetry.tracer_provider.add_span_processor(processor)
    telemetry.export_spans_directly()
    tracer = telemetry.tracer_provider.get_tracer("example-agent")
    with tracer.start_as_current_span("handle request"):  # one trace, two runs one after the other
        ExampleAgent(tracer=tracer).run(PARIS)
        with tracer.start_as_current_span(
            "invoke_agent clock",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "clock"},
        ):
            # The first run is scored while the second is open: its evaluation spans end in the
            # trace the processor buffers for the second.
            wait_until(
                lambda: len(_evaluation_spans(telemetry)) == 2, message="the first run's two evaluation spans"
            )
            for index in range(TOOL_SPANS):
                with tracer.start_as_current_span(
                    "execute_tool get_time",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "get_time",
                        "gen_ai.tool.call.id": f"call_{index}",
                    },
                ):
                    pass
    assert processor.force_flush(10_000)
    _, second = sorted(recorder.runs, key=lambda run: run.start_ns)
    assert second.agent_name == "clock"
    assert [call.call_id for call in second.tool_calls] == [f"call_{index}" for index in range(TOOL_SPANS)]
    assert telemetry.counter("otel_scorers.spans.dropped", otel_scorers__reason="trace_span_limit") == 0
