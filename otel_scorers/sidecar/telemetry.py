"""The sidecar's own OpenTelemetry SDK providers: scores go back to the collector over OTLP.

Evaluation spans, `gen_ai.evaluation.result` events and metrics are exported by the SDK's OTLP
exporters, configured by the `sidecar.export` section or, for what it leaves unset, by the
standard `OTEL_EXPORTER_OTLP_*` variables. The same metrics are also served on `/metrics` for
Prometheus.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any

from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from prometheus_client import CollectorRegistry, generate_latest

from otel_scorers.config import ExportConfig
from otel_scorers.score_export import OtlpScoreExport

#: Evaluation spans and log records each exporter may have waiting (about 1 KiB each).
EXPORT_QUEUE_SIZE = 16_384
#: What a run's queued item is reckoned to hold (its evaluation spans), to bound the scores' queue
#: in runs by about the same memory.
SCORES_PER_RUN = 8
_SIGNAL_PATHS = {"traces": "/v1/traces", "metrics": "/v1/metrics", "logs": "/v1/logs"}


@dataclass
class Telemetry:
    tracer_provider: TracerProvider
    logger_provider: LoggerProvider
    meter_provider: MeterProvider
    registry: CollectorRegistry
    batch_processors: tuple[Any, ...] = ()
    #: Where evaluation spans and events go, written as OTLP (None: through the providers).
    scores: OtlpScoreExport | None = None

    def export_backlog(self) -> float:
        """How full the fullest of the export queues is, 0 to 1 (0 when the SDK does not tell):
        scoring waits when the exporters fall behind, instead of letting the SDK drop what it
        cannot queue."""
        fullest = self.scores.backlog() if self.scores is not None else 0.0
        for processor in self.batch_processors:
            queue = getattr(getattr(processor, "_batch_processor", None), "_queue", None)
            if queue is not None and queue.maxlen:
                fullest = max(fullest, len(queue) / queue.maxlen)
        return fullest

    def exports_behind(self) -> bool:
        return self.export_backlog() > 0.5

    def prometheus_text(self) -> bytes:
        return generate_latest(self.registry)

    def shutdown(self, timeout_s: float) -> None:
        """Flush what is buffered and stop. Each exporter gives up after its own `timeout_s`, so an
        unreachable collector delays the exit by about that, not by every retry of every signal."""
        millis = int(timeout_s * 1000)
        if self.scores is not None:
            self.scores.force_flush(millis)
            self.scores.shutdown()
        self.tracer_provider.force_flush(millis)
        self.logger_provider.force_flush(millis)
        self.meter_provider.shutdown(timeout_millis=millis)  # collects and exports one last time
        self.tracer_provider.shutdown()
        self.logger_provider.shutdown()


def _protocol(config: ExportConfig) -> str:
    return config.protocol or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")


def _exporters(config: ExportConfig) -> tuple[Any, Any, Any]:
    """Span, log and metric exporters; arguments left out fall back to the SDK's environment."""
    protocol = _protocol(config)
    common: dict[str, Any] = {"timeout": config.timeout_s}
    if config.headers:
        common["headers"] = dict(config.headers)
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        if config.endpoint:
            common["endpoint"] = config.endpoint
            common["insecure"] = (
                config.insecure if config.insecure is not None else not config.endpoint.startswith("https://")
            )
        elif config.insecure is not None:
            common["insecure"] = config.insecure
        return OTLPSpanExporter(**common), OTLPLogExporter(**common), OTLPMetricExporter(**common)
    if protocol != "http/protobuf":
        raise ValueError(f"unsupported OTLP protocol {protocol!r}; use grpc or http/protobuf")
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogExporter
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
        OTLPMetricExporter as HttpMetricExporter,
    )
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter

    def endpoint(signal: str) -> dict[str, Any]:
        if not config.endpoint:
            return common
        return {**common, "endpoint": config.endpoint.rstrip("/") + _SIGNAL_PATHS[signal]}

    return (
        HttpSpanExporter(**endpoint("traces")),
        HttpLogExporter(**endpoint("logs")),
        HttpMetricExporter(**endpoint("metrics")),
    )


def build_telemetry(config: ExportConfig) -> Telemetry:
    # The receiving and the scoring process export the same metrics: an instance id apiece keeps
    # their series apart.
    resource = Resource.create(
        {
            "service.name": os.environ.get("OTEL_SERVICE_NAME", "otel-scorers"),
            "service.instance.id": str(uuid.uuid4()),
        }
    )
    span_exporter, log_exporter, metric_exporter = _exporters(config)
    tracer_provider = TracerProvider(resource=resource)
    delay_ms = int(config.batch_delay_s * 1000)
    span_processor = BatchSpanProcessor(
        span_exporter, schedule_delay_millis=delay_ms, max_queue_size=EXPORT_QUEUE_SIZE
    )
    tracer_provider.add_span_processor(span_processor)
    logger_provider = LoggerProvider(resource=resource)
    log_processor = BatchLogRecordProcessor(
        log_exporter, schedule_delay_millis=delay_ms, max_queue_size=EXPORT_QUEUE_SIZE
    )
    logger_provider.add_log_record_processor(log_processor)
    registry = CollectorRegistry(auto_describe=True)
    readers = [
        PeriodicExportingMetricReader(
            metric_exporter, export_interval_millis=config.metric_interval_s * 1000
        ),
        PrometheusMetricReader(registry=registry),
    ]
    meter_provider = MeterProvider(resource=resource, metric_readers=readers)
    scores = OtlpScoreExport(
        config.endpoint,
        protocol=config.protocol,
        headers=config.headers,
        insecure=config.insecure,
        timeout_s=config.timeout_s,
        resource=resource,
        schedule_delay_millis=delay_ms,
        max_queue_size=EXPORT_QUEUE_SIZE // SCORES_PER_RUN,
    )
    scores.start()
    return Telemetry(
        tracer_provider, logger_provider, meter_provider, registry, (span_processor, log_processor), scores
    )
