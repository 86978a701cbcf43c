"""An OTLP endpoint that takes traces only (as Jaeger does: logs and metrics are answered
UNIMPLEMENTED over gRPC, 404 over HTTP): both doors say so once, in one line naming the setting
that turns the signal off, send no more of it there, and count what was not sent as refused, not
as late. The evaluation spans still arrive."""

from __future__ import annotations

import logging
import signal
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider

from otel_scorers import ScoringSpanProcessor, checks
from otel_scorers.demos.example_agent import DEMO_RUNS
from otel_scorers.otlp.score_export import OtlpScoreExport
from otel_scorers.span_record import OWN_SCOPE
from tests.otlp_capture import HttpTraceCapture, OtlpCapture
from tests.sidecar_harness import ServeProcess, agent_spans, encode, send_grpc
from tests.waiting import wait_until

RUNS = 4


def scored_runs(export: OtlpScoreExport) -> ScoringSpanProcessor:
    """Two scorers over `RUNS` runs, flushed and shut down."""
    provider = TracerProvider()
    processor = ScoringSpanProcessor(
        [checks.no_tool_errors(), checks.includes("sunny")],
        tracer_provider=provider,
        meter_provider=MeterProvider(),
        export=export,
    )
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("agent")
    for _ in range(RUNS):
        with tracer.start_as_current_span(
            "invoke_agent weather",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather"},
        ):
            pass
    processor.force_flush(10_000)
    processor.shutdown(5.0)
    return processor


def warnings_from(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
def test_the_processor_says_once_that_the_endpoint_refuses_logs_and_counts_the_events_as_refused(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    grpc_backend, http_backend = OtlpCapture(signals=("traces",)), HttpTraceCapture(traces_only=True)
    with grpc_backend, http_backend:
        endpoint = grpc_backend.endpoint if protocol == "grpc" else http_backend.endpoint
        # Batches of one run: several events requests would each have failed before.
        export = OtlpScoreExport(endpoint, protocol=protocol, max_export_batch_size=1)  # type: ignore[arg-type]
        scored_runs(export)
        spans = grpc_backend.span_list() if protocol == "grpc" else http_backend.span_list()
    assert len(spans) == 2 * RUNS  # the evaluation spans went through
    assert export.refused() == 2 * RUNS and export.unsent() == (0, 0)
    (line,) = warnings_from(caplog)
    assert f"the OTLP endpoint {endpoint} does not take logs" in line
    assert "gen_ai.evaluation.result events are not sent there" in line
    assert "OTEL_LOGS_EXPORTER=none" in line and "OtlpScoreExport(logs=False)" in line
    if protocol == "http/protobuf":
        assert http_backend.refused == 1  # asked once, then never again


def test_the_processor_with_logs_off_sends_no_events_and_says_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    with OtlpCapture() as backend:
        export = OtlpScoreExport(backend.endpoint, logs=False)
        scored_runs(export)
        assert len(backend.span_list()) == 2 * RUNS
        assert list(backend.log_records()) == []
    assert warnings_from(caplog) == [] and export.unsent() == (0, 0) and export.refused() == 0


def test_otel_logs_exporter_none_turns_the_processors_events_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_LOGS_EXPORTER", "none")
    with OtlpCapture() as backend:
        scored_runs(OtlpScoreExport(backend.endpoint))
        assert len(backend.span_list()) == 2 * RUNS and list(backend.log_records()) == []


def serve_against(backend: str, tmp_path: Path, protocol: str = "grpc", **export: Any) -> ServeProcess:
    document = {
        "scorers": [{"type": "no_tool_errors"}, {"type": "called_tool", "args": {"tool": "get_weather"}}],
        "sidecar": {
            "grpc": {"port": 0},
            "http": {"port": 0},
            "decision_wait_s": 0.05,
            "shutdown_timeout_s": 4,
            "export": {
                "endpoint": backend,
                "protocol": protocol,
                "batch_delay_s": 0.05,
                "metric_interval_s": 0.2,
                **export,
            },
        },
    }
    config = tmp_path / "sidecar.yaml"
    config.write_text(yaml.safe_dump(document))
    return ServeProcess(config)


def scored_and_stopped(serve: ServeProcess, evaluation_spans: Any) -> list[str]:
    """Example traffic in, its scores out, a graceful stop; the warning and error lines."""
    try:
        send_grpc(f"127.0.0.1:{serve.grpc_port(90)}", encode(agent_spans(DEMO_RUNS)).SerializeToString())
        expected = 2 * len(DEMO_RUNS)
        wait_until(lambda: len(evaluation_spans()) >= expected, 60, lambda: "".join(serve.lines))
        serve.process.send_signal(signal.SIGTERM)
        assert serve.process.wait(20) == 0
    finally:
        serve.stop()
    return [line for line in serve.lines if " WARNING " in line or " ERROR " in line or "Traceback" in line]


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
def test_a_sidecar_pointed_at_a_traces_only_backend_says_so_in_one_line(
    protocol: str, tmp_path: Path
) -> None:
    grpc_backend, http_backend = OtlpCapture(signals=("traces",)), HttpTraceCapture(traces_only=True)
    with grpc_backend, http_backend:
        backend = grpc_backend if protocol == "grpc" else http_backend

        def evaluation_spans() -> list[Any]:
            if protocol == "grpc":
                return [span for _, scope, span in grpc_backend.spans() if scope == OWN_SCOPE]
            return [span for span in http_backend.span_list() if span.name.startswith("evaluate ")]

        said = scored_and_stopped(serve_against(backend.endpoint, tmp_path, protocol), evaluation_spans)
    (line,) = said
    assert f"the OTLP endpoint {backend.endpoint} does not take logs or metrics" in line
    assert "sidecar.export.logs: false and sidecar.export.metrics: false" in line


def test_a_sidecar_with_logs_and_metrics_off_says_nothing_of_them(tmp_path: Path) -> None:
    with OtlpCapture(signals=("traces",)) as backend:

        def evaluation_spans() -> list[Any]:
            return [span for _, scope, span in backend.spans() if scope == OWN_SCOPE]

        said = scored_and_stopped(
            serve_against(backend.endpoint, tmp_path, logs=False, metrics=False), evaluation_spans
        )
    assert said == []
