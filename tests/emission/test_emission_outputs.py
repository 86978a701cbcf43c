"""Where the processor's scores go: written as OTLP when the environment names an OTLP endpoint,
through the SDK providers otherwise or when asked; and one output failing keeps no score from the
others."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers import AgentRun, Score, ScoringSpanProcessor, checks
from otel_scorers.emission import Emission
from otel_scorers.emission.metrics_output import MetricsOutput
from otel_scorers.emission.sdk_output import SdkOutput
from otel_scorers.metrics import PipelineMetrics
from tests.otlp_capture import OtlpCapture

RESOURCE = Resource.create({"service.name": "weather-agent"})
RUN_ATTRIBUTES = {
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": "weather",
    "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}]',
}


@pytest.fixture
def capture() -> Iterator[OtlpCapture]:
    with OtlpCapture() as receiver:
        yield receiver


def run_agent(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], **options: object
) -> InMemorySpanExporter:
    """Three agent runs through a processor made with `environment` set; the provider's spans."""
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    spans = InMemorySpanExporter()
    provider = TracerProvider(resource=RESOURCE)
    provider.add_span_processor(SimpleSpanProcessor(spans))
    processor = ScoringSpanProcessor(
        [checks.no_tool_errors()],
        tracer_provider=provider,
        logger_provider=LoggerProvider(resource=RESOURCE),
        meter_provider=MeterProvider(),
        **options,  # type: ignore[arg-type]
    )
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("agent")
    for _ in range(3):
        with tracer.start_as_current_span("invoke_agent weather", attributes=RUN_ATTRIBUTES):
            pass
    assert processor.force_flush(10_000)
    processor.shutdown()
    return spans


def evaluation_spans(spans: InMemorySpanExporter) -> list[str]:
    return [span.name for span in spans.get_finished_spans() if span.name.startswith("evaluate ")]


def test_with_an_otlp_endpoint_in_the_environment_scores_are_written_to_it_not_through_the_provider(
    monkeypatch: pytest.MonkeyPatch, capture: OtlpCapture
) -> None:
    spans = run_agent(monkeypatch, {"OTEL_EXPORTER_OTLP_ENDPOINT": capture.endpoint})
    assert evaluation_spans(spans) == []
    sent = capture.spans()
    assert [span.name for _, _, span in sent] == ["evaluate no_tool_errors"] * 3
    assert {resource["service.name"] for resource, _, _ in sent} == {"weather-agent"}
    assert len(list(capture.log_records())) == 3


def test_export_false_keeps_scores_on_the_providers_whatever_the_environment_says(
    monkeypatch: pytest.MonkeyPatch, capture: OtlpCapture
) -> None:
    spans = run_agent(monkeypatch, {"OTEL_EXPORTER_OTLP_ENDPOINT": capture.endpoint}, export=False)
    assert evaluation_spans(spans) == ["evaluate no_tool_errors"] * 3
    assert capture.spans() == []


def test_a_disabled_sdk_sends_nothing_to_the_endpoint_the_environment_names(
    monkeypatch: pytest.MonkeyPatch, capture: OtlpCapture
) -> None:
    run_agent(
        monkeypatch,
        {"OTEL_EXPORTER_OTLP_ENDPOINT": capture.endpoint, "OTEL_SDK_DISABLED": "true"},
    )
    assert capture.spans() == []


def test_without_an_endpoint_in_the_environment_scores_go_through_the_providers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    spans = run_agent(monkeypatch, {})
    assert evaluation_spans(spans) == ["evaluate no_tool_errors"] * 3


class BrokenOutput:
    """An output whose sending fails every time (a closed socket, a full disk)."""

    def emit(self, run: AgentRun, scores: Sequence[Score]) -> None:
        raise OSError("no space left on device")

    def flush(self) -> None:
        raise OSError("no space left on device")

    def behind(self) -> bool:
        return False


def test_an_output_that_fails_keeps_no_score_from_the_outputs_after_it() -> None:
    spans, logs = InMemorySpanExporter(), InMemoryLogRecordExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    reader = InMemoryMetricReader()
    emission = Emission(
        [
            BrokenOutput(),
            SdkOutput(tracer_provider, logger_provider),
            MetricsOutput(PipelineMetrics(MeterProvider(metric_readers=[reader]))),
        ]
    )
    run = AgentRun(trace_id=7, span_id=9, agent_name="weather", input=None, output="Sunny.")
    emission.emit(run, [Score("no_tool_errors", 1.0, "pass")])
    emission.flush()
    assert [span.name for span in spans.get_finished_spans()] == ["evaluate no_tool_errors"]
    assert len(logs.get_finished_logs()) == 1
    data = reader.get_metrics_data()
    assert data is not None
    names = {
        metric.name
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }
    assert {"gen_ai.evaluation.score", "otel_scorers.scorer.duration"} <= names


def test_the_processor_section_s_export_false_keeps_scores_on_the_providers(
    monkeypatch: pytest.MonkeyPatch, capture: OtlpCapture, tmp_path: Path
) -> None:
    config = tmp_path / "scorers.yaml"
    config.write_text("scorers:\n  - type: no_tool_errors\nprocessor:\n  export: false\n")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", capture.endpoint)
    spans = InMemorySpanExporter()
    provider = TracerProvider(resource=RESOURCE)
    provider.add_span_processor(SimpleSpanProcessor(spans))
    processor = ScoringSpanProcessor.from_config(
        config, tracer_provider=provider, logger_provider=LoggerProvider(), meter_provider=MeterProvider()
    )
    provider.add_span_processor(processor)
    with provider.get_tracer("agent").start_as_current_span(
        "invoke_agent weather", attributes=RUN_ATTRIBUTES
    ):
        pass
    assert processor.force_flush(10_000)
    processor.shutdown()
    assert evaluation_spans(spans) == ["evaluate no_tool_errors"]
    assert capture.spans() == []
