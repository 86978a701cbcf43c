"""The OpenTelemetry SDK providers that send scores over OTLP, built in one place from one
`ExportConfig` (`build_telemetry`), as the SDK's `_configuration` builds them from its environment:
the sidecar's processes and `otel-scorers score --otlp-endpoint` get theirs here.

Evaluation spans, `gen_ai.evaluation.result` events and metrics are exported by the SDK's OTLP
exporters (`exporters.py`), configured by the settings (the `sidecar.export` section, or what a
command was given) or, for what they leave unset, by the standard `OTEL_EXPORTER_OTLP_*`
variables. The same metrics are also kept for Prometheus (`prometheus_text`).
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, cast

from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogExportResult, LogRecordExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from prometheus_client import CollectorRegistry, generate_latest

from otel_scorers.bounded_call import call_within
from otel_scorers.human_text import counted
from otel_scorers.otlp.counting_exporters import CountingExporter, CountingMetricExporter
from otel_scorers.otlp.endpoint import unreachable
from otel_scorers.otlp.exporters import ExportConfig, export_endpoint, export_protocol, signal_exporters
from otel_scorers.otlp.refusal import SignalRefusal, guard_grpc, guard_http, refusal_notice, refused_signals
from otel_scorers.otlp.score_export import OtlpScoreExport, queue_fullness
from otel_scorers.throttled_log import throttled

logger = logging.getLogger("otel_scorers")

#: Evaluation spans and log records each exporter may have waiting (about 1 KiB each).
EXPORT_QUEUE_SIZE = 16_384
#: What a run's queued item is reckoned to hold (its evaluation spans), to bound the scores' queue
#: in runs by about the same memory.
SCORES_PER_RUN = 8


class ExportFailureLog(logging.Filter):
    """The SDK's OTLP exporters log every failed attempt and every retry: against an endpoint
    nothing listens on, a dozen lines in 30 s, and more at shutdown. On the log's handlers, this
    turns them into one line that names the endpoint, repeated at most once a minute with the
    count (`throttled`), while the exporters go on retrying with their backoff."""

    def __init__(self, endpoint: str) -> None:
        super().__init__()
        self.endpoint = endpoint

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("opentelemetry.exporter.otlp") or record.levelno < logging.WARNING:
            return True
        said = record.getMessage()
        if not said.startswith(("Shutdown in progress", "Exporter already shutdown")):  # stopping: said then
            throttled.warning(
                "otlp_export_failed",
                "otel_scorers: cannot send scores to the OTLP endpoint %s (%s); retrying with backoff",
                self.endpoint,
                said if len(said) <= 200 else said[:197] + "...",
            )
        return False


def quiet_export_failures(endpoint: str) -> None:
    """`ExportFailureLog` on each handler of the root logger (once)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(existing, ExportFailureLog) for existing in handler.filters):
            handler.addFilter(ExportFailureLog(endpoint))


@dataclass
class Telemetry:
    """What `build_telemetry` makes: the providers the outputs write to, their counting
    exporters, the written scores' export, and how to stop them all by a deadline."""

    tracer_provider: TracerProvider
    logger_provider: LoggerProvider
    meter_provider: MeterProvider
    registry: CollectorRegistry
    batch_processors: tuple[Any, ...] = ()
    #: Where evaluation spans and events go, written as OTLP (None: through the providers).
    scores: OtlpScoreExport | None = None
    #: The providers' span, log and metric exporters, counting what they sent and could not.
    exporters: tuple[CountingExporter, CountingExporter, CountingMetricExporter] | None = None
    #: Where the exporters send (named in what shutdown reports it could not send).
    endpoint: str = field(default="the OTLP endpoint")
    #: How (grpc, http/protobuf): with the endpoint, what shutdown probes before it flushes.
    protocol: str = ""

    def provider_backlog(self) -> float:
        """How full the fullest of the providers' span and log export queues is, 0 to 1 (0 when
        the SDK does not tell). The written scores' queue is their output's to watch."""
        return max((queue_fullness(processor) for processor in self.batch_processors), default=0.0)

    def prometheus_text(self) -> bytes:
        return generate_latest(self.registry)

    def shutdown(self, timeout_s: float, report: bool = True) -> None:
        """Flush what is buffered and stop, within `timeout_s` whatever the collector does, then log
        what could not be sent (unless not to `report`: the caller says it). The SDK's flushes ignore their timeout (an unreachable collector
        holds one for every retry of every batch), so they run on a thread given up at the
        deadline; shutting the exporters down then ends the send in progress."""
        deadline = time.monotonic() + timeout_s
        millis = int(timeout_s * 1000)
        scores = self.scores
        # Nothing listens there: a flush would spend the deadline on retries, so what is queued
        # is counted as not sent at once.
        refused = unreachable(self.endpoint, self.protocol) if self.protocol else None

        def flush() -> None:
            if scores is not None:
                scores.force_flush(millis)
            self.tracer_provider.force_flush(millis)
            self.logger_provider.force_flush(millis)
            self.meter_provider.force_flush(millis)  # collects and exports one last time

        # Most of the time goes to the flush; shutting down, with the exporters closed, is quick.
        flushed = refused is None and call_within(
            flush, (deadline - time.monotonic()) * 0.8, "telemetry flush"
        )
        if scores is not None:
            scores.close_exporters()
        for exporter in self.exporters or ():
            exporter.shutdown()

        def stop() -> None:
            if scores is not None:
                scores.shutdown()
            self.tracer_provider.shutdown()
            self.logger_provider.shutdown()
            self.meter_provider.shutdown(timeout_millis=max(1, int((deadline - time.monotonic()) * 1000)))

        stopped = call_within(stop, deadline - time.monotonic(), "telemetry shutdown")
        if report:
            self._report_unsent(flushed, refused)
        if not stopped:
            logger.warning(
                "otel_scorers: the exporters did not stop within %.1f s; exiting anyway", timeout_s
            )

    def _report_unsent(self, flushed: bool, refused: str | None = None) -> None:
        spans, records = self.scores.unsent() if self.scores is not None else (0, 0)
        metrics_lost = not flushed
        if self.exporters is not None:
            span_exporter, log_exporter, metric_exporter = self.exporters
            spans += span_exporter.unsent
            records += log_exporter.unsent
            metrics_lost = metrics_lost or metric_exporter.last_failed
        unsent = [
            *([counted(spans, "evaluation span")] if spans else []),
            *([counted(records, "log record")] if records else []),
            *(["the last metrics"] if metrics_lost else []),
        ]
        if unsent:
            what = ", ".join(unsent[:-1]) + (" and " if len(unsent) > 1 else "") + unsent[-1]
            logger.warning(
                "otel_scorers: could not send %s to %s%s",
                what,
                self.endpoint,
                f" ({refused})" if refused else "" if flushed else " before the shutdown deadline",
            )


def _guarded(
    config: ExportConfig, logs_refusal: SignalRefusal, metrics_refusal: SignalRefusal
) -> tuple[Any, Any, Any]:
    """Span, log and metric exporters, the log and metric ones guarded: a refusal of their
    signal is marked, not retried."""
    spans, logs, metrics = signal_exporters(config)
    guard = guard_grpc if export_protocol(config) == "grpc" else guard_http
    return spans, guard(logs, logs_refusal), guard(metrics, metrics_refusal)


def _refusals(config: ExportConfig, endpoint: str, speak: bool) -> tuple[SignalRefusal, SignalRefusal]:
    """Whether the endpoint refuses logs or metrics, asked before anything is sent (Jaeger takes
    traces only), and said in one line when `speak` (the receiving process speaks for the
    scoring processes, which ask too). A refusal that comes later is said when it comes."""
    logs = SignalRefusal(
        "logs",
        endpoint,
        "the gen_ai.evaluation.result events (and turn records)",
        "sidecar.export.logs: false",
    )
    metrics = SignalRefusal(
        "metrics",
        endpoint,
        "the sidecar's metrics (/metrics still serves them)",
        "sidecar.export.metrics: false",
    )
    wanted = {
        refusal.signal: refusal for refusal, on in ((logs, config.logs), (metrics, config.metrics)) if on
    }
    protocol = export_protocol(config)
    if wanted and unreachable(endpoint, protocol) is None:
        answers = refused_signals(endpoint, protocol, list(wanted), config.headers, config.insecure)
        for signal, reason in answers.items():
            wanted[signal].reason = reason
        if answers and speak:
            logger.warning(refusal_notice([wanted[signal] for signal in answers], endpoint))
    return logs, metrics


def build_telemetry(
    config: ExportConfig, speak: bool = True, watch_refusals: bool = True, written_scores: bool = True
) -> Telemetry:
    """The providers and exporters. `speak=False` in a sidecar's scoring process, whose receiving
    process has said already what the endpoint refuses. A command that sends once and then says
    itself what was not sent (a backfill) watches no refusals (what is refused counts as not
    sent) and sends its scores through the providers (`written_scores=False`), whose exporters
    count what they sent."""
    # The receiving and the scoring process export the same metrics: an instance id apiece keeps
    # their series apart.
    resource = Resource.create(
        {
            "service.name": os.environ.get("OTEL_SERVICE_NAME", "otel-scorers"),
            "service.instance.id": str(uuid.uuid4()),
        }
    )
    if not config.enabled:
        return _without_export(resource)
    quiet_export_failures(export_endpoint(config))
    logs_refusal: SignalRefusal | None = None
    metrics_refusal: SignalRefusal | None = None
    if watch_refusals:
        logs_refusal, metrics_refusal = _refusals(config, export_endpoint(config), speak)
        inner_spans, inner_logs, inner_metrics = _guarded(config, logs_refusal, metrics_refusal)
    else:
        inner_spans, inner_logs, inner_metrics = signal_exporters(config)
    exporters = (
        CountingExporter(inner_spans, SpanExportResult.FAILURE),
        CountingExporter(inner_logs, LogExportResult.FAILURE, logs_refusal),
        CountingMetricExporter(inner_metrics, metrics_refusal),
    )
    telemetry = _exporting(config, resource, exporters)
    if written_scores:
        telemetry.scores = _started_score_export(config, resource, logs_refusal)
    return telemetry


def _exporting(
    config: ExportConfig,
    resource: Resource,
    exporters: tuple[CountingExporter, CountingExporter, CountingMetricExporter],
) -> Telemetry:
    """The providers over batching processors and `exporters`, and the metrics kept for Prometheus."""
    span_exporter, log_exporter, metric_exporter = exporters
    # `Telemetry.shutdown` stops them within its deadline; the SDK's own exit hooks would not.
    tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    delay_ms = int(config.batch_delay_s * 1000)
    # The processors call only export, force_flush and shutdown, which CountingExporter has.
    span_processor = BatchSpanProcessor(
        cast(SpanExporter, span_exporter), schedule_delay_millis=delay_ms, max_queue_size=EXPORT_QUEUE_SIZE
    )
    tracer_provider.add_span_processor(span_processor)
    logger_provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
    log_processor = BatchLogRecordProcessor(
        cast(LogRecordExporter, log_exporter),
        schedule_delay_millis=delay_ms,
        max_queue_size=EXPORT_QUEUE_SIZE,
    )
    if config.logs:
        logger_provider.add_log_record_processor(log_processor)
    registry = CollectorRegistry(auto_describe=True)
    readers: list[Any] = [PrometheusMetricReader(registry=registry)]
    if config.metrics:
        interval_ms = config.metric_interval_s * 1000
        readers.append(PeriodicExportingMetricReader(metric_exporter, export_interval_millis=interval_ms))
    meter_provider = MeterProvider(resource=resource, metric_readers=readers, shutdown_on_exit=False)
    return Telemetry(
        tracer_provider,
        logger_provider,
        meter_provider,
        registry,
        (span_processor, log_processor),
        None,
        exporters,
        export_endpoint(config),
        export_protocol(config),
    )


def _started_score_export(
    config: ExportConfig, resource: Resource, logs_refusal: SignalRefusal | None
) -> OtlpScoreExport:
    """Where evaluation spans and events are written as OTLP, sending: its queue holds runs, so it
    is bounded by about the memory of the providers' queues (`SCORES_PER_RUN`)."""
    scores = OtlpScoreExport(
        config.endpoint,
        protocol=config.protocol,
        headers=config.headers,
        insecure=config.insecure,
        timeout_s=config.timeout_s,
        resource=resource,
        schedule_delay_millis=int(config.batch_delay_s * 1000),
        max_queue_size=EXPORT_QUEUE_SIZE // SCORES_PER_RUN,
        logs=config.logs,
        logs_refusal=logs_refusal,
    )
    scores.start()
    return scores


def _without_export(resource: Resource) -> Telemetry:
    """Providers that send nothing: the metrics are still served on `/metrics`."""
    registry = CollectorRegistry(auto_describe=True)
    return Telemetry(
        TracerProvider(resource=resource, shutdown_on_exit=False),
        LoggerProvider(resource=resource, shutdown_on_exit=False),
        MeterProvider(
            resource=resource,
            metric_readers=[PrometheusMetricReader(registry=registry)],
            shutdown_on_exit=False,
        ),
        registry,
        endpoint="",
    )
