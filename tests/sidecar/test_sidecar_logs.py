"""The sidecar's log stays readable under load: no line per judge call from litellm, in either
scoring mode."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from otel_scorers.demos.example_agent import DEMO_RUNS
from otel_scorers.span_record import OWN_SCOPE
from tests.judge_server import JudgeServer, judge_server
from tests.otlp_capture import OtlpCapture
from tests.sidecar_harness import ServeProcess, agent_spans, encode, send_grpc


@pytest.fixture
def judge() -> Iterator[JudgeServer]:
    with judge_server(responder=lambda _body: '{"verdict": "yes", "reason": "on topic"}') as running:
        yield running


@pytest.mark.parametrize("scoring_process", [True, False], ids=["scoring-process", "scoring-thread"])
def test_judge_calls_log_nothing_per_call(tmp_path: Path, judge: JudgeServer, scoring_process: bool) -> None:
    with OtlpCapture() as capture:
        settings = {
            "grpc": {"port": 0},
            "http": {"port": 0},
            "decision_wait_s": 0.05,
            "scoring_process": scoring_process,
            "shutdown_timeout_s": 4,
            "export": {"endpoint": capture.endpoint, "batch_delay_s": 0.05, "metric_interval_s": 60},
        }
        document = {
            "scorers": [{"type": "answer_relevancy", "name": "relevant"}],
            "judge": {"model": "openai/test-judge", "api_base": judge.url, "api_key": "test-key"},
            "sidecar": settings,
        }
        config = tmp_path / "sidecar.yaml"
        config.write_text(yaml.safe_dump(document))
        serve = ServeProcess(config)
        try:
            send_grpc(f"127.0.0.1:{serve.grpc_port()}", encode(agent_spans(DEMO_RUNS)).SerializeToString())
            # The first judge call imports litellm in the scoring process: seconds on a loaded machine.
            assert capture.wait_for(
                lambda: sum(1 for _, scope, _ in capture.spans() if scope == OWN_SCOPE) >= len(DEMO_RUNS),
                timeout_s=60,
            ), "".join(serve.lines)
            serve.process.send_signal(signal.SIGTERM)
            assert serve.process.wait(15) == 0
        finally:
            serve.stop()
    assert len(judge.requests) >= len(DEMO_RUNS)  # the judge was called, once a run or more
    litellm_lines = [line for line in serve.lines if "litellm" in line.lower()]
    assert litellm_lines == []


def test_a_judge_call_abandoned_inside_litellm_says_nothing_other_unawaited_coroutines_still_do() -> None:
    # litellm makes its provider's coroutine on an executor thread: a call cancelled before it
    # is awaited (the shutdown deadline) leaves it unawaited, by design.
    script = """
import gc
from otel_scorers.sidecar.logs import setup_logging

class OpenAIChatCompletion:
    async def acompletion(self):
        pass

async def forgotten():
    pass

setup_logging()
OpenAIChatCompletion().acompletion()
forgotten()
gc.collect()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "coroutine 'forgotten' was never awaited" in done.stderr
    assert "acompletion" not in done.stderr
