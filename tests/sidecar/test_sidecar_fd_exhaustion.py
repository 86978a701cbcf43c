"""Out of file descriptors, the sidecar logs a line a second at most (not a traceback per failed
accept), keeps serving the connections it has, and accepts again once descriptors come back."""

from __future__ import annotations

import http.client
import os
import socket
import time
from pathlib import Path

import yaml

from otel_scorers.demos.example_agent import DEMO_RUNS
from otel_scorers.span_record import OWN_SCOPE
from tests.otlp_capture import OtlpCapture
from tests.sidecar_harness import SCORERS, ServeProcess, agent_spans, encode, send_grpc
from tests.waiting import wait_until

MAX_OPEN_FILES = 128
EXHAUSTED_S = 2.0


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def traces() -> bytes:
    """The demo runs, as a new OTLP request each time (new trace ids)."""
    return encode(agent_spans(DEMO_RUNS)).SerializeToString()


def post_traces(connection: http.client.HTTPConnection) -> int:
    connection.request(
        "POST", "/v1/traces", body=traces(), headers={"Content-Type": "application/x-protobuf"}
    )
    response = connection.getresponse()
    response.read()
    return response.status


def exhaust(port: int, pid: int, sockets: list[socket.socket]) -> None:
    """Connect to `port` until the sidecar holds `MAX_OPEN_FILES` descriptors (or the backlog is
    full: a connection that is not even queued any more times out)."""
    for _ in range(MAX_OPEN_FILES + 20):
        try:
            sockets.append(socket.create_connection(("127.0.0.1", port), timeout=2))
        except OSError:
            return
    wait_until(
        lambda: open_files(pid) >= MAX_OPEN_FILES - 1,
        60,
        lambda: f"{MAX_OPEN_FILES - 1} descriptors open (there are {open_files(pid)})",
    )


def evaluations(capture: OtlpCapture) -> int:
    return sum(1 for _, scope, _ in capture.spans() if scope == OWN_SCOPE)


def test_out_of_file_descriptors_logs_little_and_serves_again_once_they_are_back(tmp_path: Path) -> None:
    with OtlpCapture() as capture:
        settings = {
            "grpc": {"port": 0},
            "http": {"port": 0},
            "decision_wait_s": 0.05,
            "shutdown_timeout_s": 2,
            "export": {"endpoint": capture.endpoint, "batch_delay_s": 0.05, "metric_interval_s": 0.5},
        }
        config = tmp_path / "sidecar.yaml"
        config.write_text(yaml.safe_dump({"scorers": SCORERS, "sidecar": settings}))
        serve = ServeProcess(config, max_open_files=MAX_OPEN_FILES)
        extra: list[socket.socket] = []
        try:
            grpc_endpoint = f"127.0.0.1:{serve.grpc_port()}"
            kept = http.client.HTTPConnection("127.0.0.1", serve.http_port(), timeout=10)
            assert post_traces(kept) == 200  # a keep-alive connection opened beforehand
            pid = serve.process.pid
            exhaust(serve.http_port(), pid, extra)
            exhaust(serve.grpc_port(), pid, extra)
            started = time.monotonic()
            time.sleep(EXHAUSTED_S)
            # The connection the sidecar has is still served while no new one can be accepted.
            assert post_traces(kept) == 200
            ended = time.monotonic()
            logged = serve.lines_between(started, ended)
            kept.close()
            for connection in extra:
                connection.close()
            extra.clear()
            # Descriptors are back: new connections on both receivers are accepted and scored.
            send_grpc(grpc_endpoint, traces())
            fresh = http.client.HTTPConnection("127.0.0.1", serve.http_port(), timeout=10)
            assert post_traces(fresh) == 200
            fresh.close()
            expected = 4 * len(DEMO_RUNS) * len(SCORERS)  # four requests, every run scored
            assert capture.wait_for(lambda: evaluations(capture) >= expected), "".join(serve.lines[-50:])
        finally:
            for connection in extra:
                connection.close()
            serve.stop()
    # gRPC's own "File descriptor limit reached" once a second, and ours once: not thousands.
    assert len(logged) <= 8 * EXHAUSTED_S, f"{len(logged)} lines in {EXHAUSTED_S} s: {''.join(logged[:30])}"
    assert any("cannot accept connections" in line for line in serve.lines), "".join(serve.lines)
    assert any("accepts connections again" in line for line in serve.lines), "".join(serve.lines)
