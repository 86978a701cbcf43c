"""A shutdown keeps its deadline when the OTLP endpoint accepts connections and never answers,
and says how many evaluation spans and events it could not send."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider

from otel_scorers import ScoringSpanProcessor, checks
from otel_scorers.otlp.score_export import OtlpScoreExport

RUNS = 5
#: What a shutdown may take beyond its timeout: a thread's start and the last bookkeeping (well
#: under half a second on a quiet machine, more when its cores are busy). Without the deadline
#: it would wait for the exporter's own timeout (ten seconds a batch), or forever.
MARGIN_S = 5.0


@pytest.fixture
def blackhole() -> Iterator[int]:
    """A loopback port that accepts every connection and never reads or answers."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=128)
    listener.settimeout(0.1)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            held.append(connection)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(1.0)
        for connection in held:
            connection.close()
        listener.close()


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
def test_shutdown_ends_within_its_timeout_with_a_blackholed_endpoint_and_counts_what_it_could_not_send(
    blackhole: int, protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    provider = TracerProvider()
    export = OtlpScoreExport(f"http://127.0.0.1:{blackhole}", protocol=protocol)  # type: ignore[arg-type]
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
    timeout_s = 2.0
    caplog.set_level(logging.WARNING, logger="otel_scorers")
    started = time.monotonic()
    processor.shutdown(timeout_s)
    took = time.monotonic() - started
    assert took < timeout_s + MARGIN_S, took
    assert export.unsent() == (2 * RUNS, 2 * RUNS)  # two scorers: a span and an event each
    assert any(
        f"could not send {2 * RUNS} evaluation spans and {2 * RUNS} events" in record.getMessage()
        for record in caplog.records
    )


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
def test_a_backfills_telemetry_closes_within_its_timeout_with_a_blackholed_endpoint(
    blackhole: int, protocol: str
) -> None:
    from otel_scorers.cli.backfill import TelemetryOut
    from otel_scorers.model import AgentRun, Score

    out = TelemetryOut(f"http://127.0.0.1:{blackhole}", protocol)
    run = AgentRun(0x5B8EFFF798038103D269B633813FC60C, 0x1234, "weather", "hi", "yo")
    for _ in range(RUNS):
        out.emit(run, [Score("includes", 1.0, "pass"), Score("excludes", 1.0, "pass")])
    timeout_s = 2.0
    started = time.monotonic()
    said = out.close(timeout_s)
    took = time.monotonic() - started
    assert took < timeout_s + MARGIN_S, took
    assert f"{4 * RUNS} evaluation spans and events were not sent" in said
