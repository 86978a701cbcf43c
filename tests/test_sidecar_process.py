"""`otel-scorers serve` as a process: SIGTERM with pending work stops accepting, scores what is
pending, flushes the exports and exits cleanly."""

from __future__ import annotations

import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from otel_scorers.example_agent import DEMO_RUNS
from otel_scorers.span_record import OWN_SCOPE
from tests.otlp_capture import OtlpCapture
from tests.sidecar_harness import SCORERS, ServeProcess, agent_spans, encode, send_grpc


@pytest.fixture
def capture() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


def test_sigterm_with_pending_runs_scores_them_flushes_and_exits(
    tmp_path: Path, capture: OtlpCapture
) -> None:
    config = tmp_path / "sidecar.yaml"
    settings = {
        "grpc": {"port": 0},
        "http": {"port": 0},
        "decision_wait_s": 30,  # nothing would be scored before the signal without a graceful stop
        "max_wait_s": 60,
        "shutdown_timeout_s": 10,
        "export": {
            "endpoint": capture.endpoint,
            "protocol": "grpc",
            "batch_delay_s": 5,
            "metric_interval_s": 60,
        },
    }
    config.write_text(yaml.safe_dump({"scorers": SCORERS, "sidecar": settings}))
    serve = ServeProcess(config)
    try:
        port = serve.grpc_port()
        send_grpc(f"127.0.0.1:{port}", encode(agent_spans(DEMO_RUNS)).SerializeToString())
        time.sleep(0.2)
        assert not any(scope == OWN_SCOPE for _, scope, _ in capture.spans())
        serve.process.send_signal(signal.SIGTERM)
        assert serve.process.wait(20) == 0, "".join(serve.lines)
    finally:
        serve.stop()
    evaluations = [span for _, scope, span in capture.spans() if scope == OWN_SCOPE]
    assert len(evaluations) == 18  # 6 runs x 3 scorers, flushed before exiting
    assert len(list(capture.log_records())) == 18
    assert "gen_ai.evaluation.results" in capture.metric_names()
    with socket.socket() as probe:  # the port is released
        assert probe.connect_ex(("127.0.0.1", port)) != 0
