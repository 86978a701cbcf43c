"""Shared fixtures: real OpenTelemetry SDK providers with in-memory exporters, and the scripted
judge server (`server`) that litellm reaches over HTTP on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers.model import AgentRun
from otel_scorers.scorers.judge import import_litellm

from .judge_server import JudgeServer, judge_server


class RunRecorder:
    """A scorer that keeps every run the pipeline hands it, for tests to assert on."""

    name = "record"
    needs: frozenset[str] = frozenset()
    binary = False

    def __init__(self) -> None:
        self.runs: list[AgentRun] = []

    def score(self, run: AgentRun) -> float:
        self.runs.append(run)
        return 1.0


@dataclass
class Telemetry:
    """A tracer, logger and meter provider whose output the test can read back."""

    tracer_provider: TracerProvider
    logger_provider: LoggerProvider
    meter_provider: MeterProvider
    spans: InMemorySpanExporter
    logs: InMemoryLogRecordExporter
    metric_reader: InMemoryMetricReader

    def export_spans_directly(self) -> None:
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))

    def providers(self) -> dict[str, Any]:
        return {
            "tracer_provider": self.tracer_provider,
            "logger_provider": self.logger_provider,
            "meter_provider": self.meter_provider,
        }

    def finished_spans(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def events(self, name: str = "gen_ai.evaluation.result") -> list[ReadableLogRecord]:
        return [record for record in self.logs.get_finished_logs() if record.log_record.event_name == name]

    def metric_points(self, name: str) -> list[Any]:
        data = self.metric_reader.get_metrics_data()
        points: list[Any] = []
        for resource_metrics in data.resource_metrics if data else ():
            for scope_metrics in resource_metrics.scope_metrics:
                for metric in scope_metrics.metrics:
                    if metric.name == name:
                        points.extend(metric.data.data_points)
        return points

    def counter(self, name: str, **attributes: Any) -> float:
        """Sum of a counter's points whose attributes include `attributes` (dots as __)."""
        wanted = {key.replace("__", "."): value for key, value in attributes.items()}
        return sum(
            point.value
            for point in self.metric_points(name)
            if all(point.attributes.get(key) == value for key, value in wanted.items())
        )


def make_telemetry() -> Telemetry:
    """Providers with in-memory exporters and reader (shut down by whoever makes them)."""
    logs = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    reader = InMemoryMetricReader()
    return Telemetry(
        tracer_provider=TracerProvider(),
        logger_provider=logger_provider,
        meter_provider=MeterProvider(metric_readers=[reader]),
        spans=InMemorySpanExporter(),
        logs=logs,
        metric_reader=reader,
    )


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    telemetry = make_telemetry()
    yield telemetry
    telemetry.tracer_provider.shutdown()
    telemetry.logger_provider.shutdown()
    telemetry.meter_provider.shutdown()


@pytest.fixture(scope="session")
def litellm_imported() -> None:
    """litellm imported once up front (seconds), so that a test's timings measure the judge only."""
    import_litellm()


@pytest.fixture
def server(litellm_imported: None) -> Iterator[JudgeServer]:
    """The scripted judge server, empty of script; `make_judge(server)` is a judge at it."""
    with judge_server() as running:
        yield running
