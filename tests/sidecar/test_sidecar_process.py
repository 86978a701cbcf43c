"""`otel-scorers serve` as a process: SIGTERM with pending work stops accepting, scores what is
pending, flushes the exports and exits cleanly, within `shutdown_timeout_s` even when the
collector is unreachable."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from otel_scorers.demos.example_agent import DEMO_RUNS
from otel_scorers.model import AgentRun
from otel_scorers.span_record import OWN_SCOPE
from tests.otlp_capture import OtlpCapture
from tests.sidecar_harness import (
    SCORERS,
    ServeProcess,
    agent_spans,
    encode,
    free_port,
    metrics_text,
    sample,
    send_grpc,
)
from tests.waiting import wait_until

#: A `sitecustomize` that writes a line (the process id, the message) to a file for each failure
#: the SDK's OTLP exporters log, before the sidecar's own log filter turns them into one line.
COUNT_EXPORT_FAILURES = """\
import logging, os

class _Counted(logging.Handler):
    def emit(self, record):
        if record.levelno >= logging.WARNING:
            with open(os.environ["EXPORT_FAILURES_FILE"], "a") as file:
                file.write(f"{os.getpid()} {record.getMessage()}".replace("\\n", " ") + "\\n")

logging.getLogger("opentelemetry.exporter.otlp").addHandler(_Counted())
"""


def counting_export_failures(tmp_path: Path, failures: Path) -> dict[str, str]:
    """The environment that has the process load `COUNT_EXPORT_FAILURES`, writing to `failures`."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(COUNT_EXPORT_FAILURES)
    path = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {"PYTHONPATH": path, "EXPORT_FAILURES_FILE": str(failures)}


def failures_by_process(failures: Path) -> Counter[str]:
    """The export failures `COUNT_EXPORT_FAILURES` wrote, by process id."""
    lines = failures.read_text().splitlines() if failures.exists() else []
    return Counter(line.split(" ", 1)[0] for line in lines)


def buffered_traces(serve: ServeProcess) -> float:
    """`otel_scorers.traces.buffered`, as the process's /metrics says."""
    return sample(metrics_text(f"http://127.0.0.1:{serve.http_port()}"), "otel_scorers_traces_buffered")


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
        # The traces wait for their decision, and nothing was scored before the signal.
        wait_until(lambda: buffered_traces(serve) == len(DEMO_RUNS), 60, f"{len(DEMO_RUNS)} traces buffered")
        assert not any(scope == OWN_SCOPE for _, scope, _ in capture.spans())
        serve.process.send_signal(signal.SIGTERM)
        assert serve.process.wait(60) == 0, "".join(serve.lines)
    finally:
        serve.stop()
    evaluations = [span for _, scope, span in capture.spans() if scope == OWN_SCOPE]
    assert len(evaluations) == 18  # 6 runs x 3 scorers, flushed before exiting
    assert len(list(capture.log_records())) == 18
    assert "gen_ai.evaluation.results" in capture.metric_names()
    with socket.socket() as probe:  # the port is released
        assert probe.connect_ex(("127.0.0.1", port)) != 0


async def slow_check(run: AgentRun) -> float:
    await asyncio.sleep(0.5)
    return 1.0


@pytest.mark.parametrize("scoring_process", [True, False], ids=["scoring-process", "scoring-thread"])
@pytest.mark.parametrize("pending_runs", [0, 1200], ids=["idle", "backlog"])
def test_sigterm_with_the_export_endpoint_unreachable_exits_0_within_the_shutdown_timeout(
    tmp_path: Path, scoring_process: bool, pending_runs: int
) -> None:
    unreachable = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    timeout_s = 2.0
    config = tmp_path / "sidecar.yaml"
    settings = {
        "grpc": {"port": 0},
        "http": {"port": 0},
        "decision_wait_s": 0.05,
        "shutdown_timeout_s": timeout_s,
        "scoring_process": scoring_process,
        "export": {"endpoint": unreachable, "batch_delay_s": 0.2, "metric_interval_s": 1, "timeout_s": 30},
    }
    scorers = [*SCORERS, {"type": "tests.sidecar.test_sidecar_process:slow_check"}]
    config.write_text(yaml.safe_dump({"scorers": scorers, "sidecar": settings}))
    serve = ServeProcess(config)
    try:
        port = serve.grpc_port()
        if pending_runs:
            body = encode(agent_spans(DEMO_RUNS * (pending_runs // len(DEMO_RUNS)))).SerializeToString()
            send_grpc(f"127.0.0.1:{port}", body)
        serve.wait_for_line("cannot send scores to the OTLP endpoint")  # failing, and retrying
        started = time.monotonic()
        serve.process.send_signal(signal.SIGTERM)
        code = serve.process.wait(120)
        took = time.monotonic() - started
    finally:
        serve.stop()
    output = "".join(serve.lines)
    assert code == 0, output
    # Its timeout and the exit (a second or so): it did not wait for the export's own 30 s
    # timeout, nor score the backlog first (a guard between the two, far from both).
    assert took < 15, output
    assert "Traceback" not in output, output
    assert "Task was destroyed" not in output, output  # the runs cancelled at shutdown unwind
    assert "could not send" in output and unreachable in output, output
    if pending_runs:
        assert re.search(r"\d+ (traces with )?runs were not scored", output), output


@pytest.mark.parametrize("scoring_process", [True, False], ids=["scoring-process", "scoring-thread"])
@pytest.mark.parametrize("receiver", ["grpc", "http"])
def test_a_port_in_use_exits_non_zero_at_once_with_one_line_naming_it(
    tmp_path: Path, scoring_process: bool, receiver: str
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        settings = {
            "grpc": {"port": port if receiver == "grpc" else 0},
            "http": {"port": port if receiver == "http" else 0},
            "scoring_process": scoring_process,
            "export": {"endpoint": "http://127.0.0.1:4317", "metric_interval_s": 60},
        }
        config = tmp_path / "sidecar.yaml"
        config.write_text(yaml.safe_dump({"scorers": SCORERS, "sidecar": settings}))
        serve = ServeProcess(config)
        try:
            code = serve.process.wait(120)  # it exits by itself (a guard against a hang)
        finally:
            serve.stop()
    problems = [line for line in serve.lines if "otel-scorers:" in line or "Traceback" in line]
    assert code == 1, "".join(serve.lines)
    protocol = "gRPC" if receiver == "grpc" else "HTTP"
    assert len(problems) == 1, "".join(serve.lines)
    assert problems[0].startswith(f"otel-scorers: cannot listen for OTLP/{protocol} on 127.0.0.1:{port}: ")


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
def test_with_nowhere_to_send_scores_the_log_says_so_once_and_the_sidecar_stops_at_once(
    tmp_path: Path, protocol: str
) -> None:
    unreachable = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    config = tmp_path / "sidecar.yaml"
    settings = {
        "grpc": {"port": 0},
        "http": {"port": 0},
        "shutdown_timeout_s": 60,
        "export": {
            "endpoint": unreachable,
            "protocol": protocol,
            "batch_delay_s": 0.2,
            "metric_interval_s": 1,
            "timeout_s": 2,  # over gRPC, an export's retries end then, failing again
        },
    }
    config.write_text(yaml.safe_dump({"scorers": SCORERS, "sidecar": settings}))
    failures = tmp_path / "export-failures"
    serve = ServeProcess(config, env=counting_export_failures(tmp_path, failures))
    try:
        serve.grpc_port()
        # A metrics export a second, each failing and retrying: the SDK has said so more than once
        # in one process (of the two that export, receiving and scoring).
        wait_until(
            lambda: max(failures_by_process(failures).values(), default=0) >= 2,
            60,
            lambda: f"a second failed export in one process: {failures_by_process(failures)}",
        )
        started = time.monotonic()
        serve.process.send_signal(signal.SIGTERM)
        code = serve.process.wait(120)
        took = time.monotonic() - started
    finally:
        serve.stop()
    output = "".join(serve.lines)
    assert code == 0, output
    # At once (a second or two): not after its shutdown timeout of a minute, waiting on an
    # endpoint that is not there (a guard between the two, far from both).
    assert took < 30, output
    said = [line for line in output.splitlines() if "WARNING" in line or "ERROR" in line]
    cannot = [line for line in said if "cannot send scores to the OTLP endpoint " + unreachable in line]
    assert 1 <= len(cannot) <= 2, output  # one per process that exports (receiving, scoring)
    at_exit = [line for line in said if "could not send the last metrics to " + unreachable in line]
    assert len(cannot) + len(at_exit) == len(said), output
    assert "could not send 0" not in output
