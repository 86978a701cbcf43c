"""The providers and exporters built from export settings (`otlp/telemetry.py`, `otlp/exporters.py`),
against real OTLP receivers on loopback."""

from __future__ import annotations

from opentelemetry._logs import LogRecord

from otel_scorers.otlp.exporters import ExportConfig
from otel_scorers.otlp.telemetry import build_telemetry
from tests.otlp_capture import HttpTraceCapture, OtlpCapture


def test_an_http_endpoint_named_without_a_scheme_is_sent_to_at_its_signals_path() -> None:
    with HttpTraceCapture() as capture:
        bare = capture.endpoint.removeprefix("http://")
        settings = ExportConfig(endpoint=bare, protocol="http/protobuf", timeout_s=3)
        telemetry = build_telemetry(settings, watch_refusals=False, written_scores=False)
        with telemetry.tracer_provider.get_tracer("test").start_as_current_span("evaluate includes"):
            pass
        telemetry.shutdown(5, report=False)
        assert [span.name for span in capture.span_list()] == ["evaluate includes"]


def test_what_each_exporter_sent_and_could_not_send_is_counted_log_records_too() -> None:
    """An endpoint that takes traces and refuses logs: the spans are counted sent, the log
    records not sent (the SDK's log exporters answer with another enum than the span ones)."""
    with OtlpCapture(("traces", "metrics")) as capture:
        settings = ExportConfig(endpoint=capture.endpoint, protocol="grpc", timeout_s=3)
        telemetry = build_telemetry(settings, watch_refusals=False, written_scores=False)
        tracer = telemetry.tracer_provider.get_tracer("test")
        for _ in range(2):
            with tracer.start_as_current_span("evaluate includes"):
                pass
        logger = telemetry.logger_provider.get_logger("test")
        for _ in range(3):
            logger.emit(LogRecord(body="gen_ai.evaluation.result"))
        telemetry.shutdown(5, report=False)
        assert telemetry.exporters is not None
        spans, logs, _ = telemetry.exporters
        assert (spans.sent, spans.unsent) == (2, 0)
        assert (logs.sent, logs.unsent) == (0, 3)
        assert len(capture.span_list()) == 2
