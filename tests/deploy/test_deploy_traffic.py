"""The compose stack's example agent, `python -m otel_scorers.demos.example_traffic`: a real process that
sends the example agent's traces over OTLP to a capturing receiver, round after round until told
to stop, and loses nothing when it stops."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from otel_scorers.demos.example_agent import DEMO_RUNS
from tests.otlp_capture import OtlpCapture


@pytest.fixture
def capture() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


def traffic(*args: str, **extra_env: str) -> subprocess.Popen[str]:
    # A short batch delay, so spans show up while it runs rather than at exit only.
    env = {**os.environ, "OTEL_BSP_SCHEDULE_DELAY": "50", "OTEL_SERVICE_NAME": "weather-service", **extra_env}
    return subprocess.Popen(
        [sys.executable, "-m", "otel_scorers.demos.example_traffic", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def run_spans(capture: OtlpCapture) -> list[str]:
    return [span.name for _, _, span in capture.spans() if span.name.startswith("invoke_agent")]


def sent(stderr: str) -> int:
    match = re.search(r"(\d+) runs sent", stderr)
    assert match, stderr
    return int(match.group(1))


def test_rounds_send_every_demo_run_over_otlp(capture: OtlpCapture) -> None:
    process = traffic("--endpoint", capture.endpoint, "--interval", "0", "--rounds", "2")
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert sent(stderr) == 2 * len(DEMO_RUNS)
    names = run_spans(capture)
    assert len(names) == 2 * len(DEMO_RUNS)
    assert {"invoke_agent weather-agent", "invoke_agent chat-agent"} == set(names)
    resources = {resource.get("service.name") for resource, _, _ in capture.spans()}
    assert resources == {"weather-service"}


def test_it_runs_until_sigterm_and_sends_every_run_it_made(capture: OtlpCapture) -> None:
    process = traffic("--endpoint", capture.endpoint, "--interval", "0.02")
    try:
        assert capture.wait_for(lambda: len(run_spans(capture)) >= 2 * len(DEMO_RUNS), 30)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)
    assert process.returncode == 0, stderr
    assert len(run_spans(capture)) == sent(stderr) >= 2 * len(DEMO_RUNS)


@pytest.mark.parametrize(
    ("args", "named"), [(["--interval", "-1"], "--interval"), (["--rounds", "0"], "--rounds")]
)
def test_bad_arguments_are_refused_by_name(args: list[str], named: str) -> None:
    process = traffic(*args)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 2
    assert named in stderr


def test_nothing_listening_is_said_and_ends_in_exit_1() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{probe.getsockname()[1]}"
    # The exporter's timeout bounds its retries, so the test does not wait 10 s for them.
    process = traffic(
        "--endpoint", endpoint, "--interval", "0", "--rounds", "1", OTEL_EXPORTER_OTLP_TIMEOUT="1"
    )
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1, stderr
    assert f"nothing accepts traces at {endpoint} yet: cannot connect to 127.0.0.1:" in stderr
    assert f"{len(DEMO_RUNS)} runs made, but " in stderr and f"not sent to {endpoint}" in stderr
    assert "runs sent" not in stderr
