"""The sidecar with a slow judge: intake keeps accepting and every run's quick checks go out,
because judge work waits in its own bounded lane instead of holding the traces in flight."""

from __future__ import annotations

import time
from collections.abc import Iterator

import grpc
import pytest

from otel_scorers.demos.example_agent import DEMO_RUNS
from otel_scorers.span_record import OWN_SCOPE
from tests.judge_server import JudgeServer, judge_server
from tests.otlp_capture import OtlpCapture
from tests.sidecar_harness import RunningSidecar, agent_spans, encode, send_grpc, sidecar_document

TRACES = 40


@pytest.fixture
def slow_judge(litellm_imported: None) -> Iterator[JudgeServer]:
    verdict = '{"verdict": "yes", "reason": "on topic"}'
    # It answers after a minute: every quick check that goes out before then did not wait for it.
    with judge_server(responder=lambda _body: verdict, latency_s=60.0) as running:
        yield running


def quick_evaluations(capture: OtlpCapture) -> int:
    return sum(
        1
        for _, scope, span in capture.spans()
        if scope == OWN_SCOPE and span.name == "evaluate no_tool_errors"
    )


def judged_evaluations(capture: OtlpCapture) -> int:
    return sum(
        1 for _, scope, span in capture.spans() if scope == OWN_SCOPE and span.name == "evaluate relevant"
    )


@pytest.mark.parametrize("scoring_process", [False, True], ids=["thread", "process"])
def test_a_slow_judge_never_makes_the_intake_refuse_or_the_quick_checks_wait(
    slow_judge: JudgeServer, scoring_process: bool
) -> None:
    document = sidecar_document(
        "",
        scorers=[
            {"type": "no_tool_errors"},
            {"type": "answer_relevancy", "name": "relevant", "timeout_s": 300},
        ],
        decision_wait_s=0.05,
        max_traces=20,
        max_runs_in_flight=8,
        scoring_process=scoring_process,
        shutdown_timeout_s=1.0,  # the judge work still pending at the end is not what is tested
    )
    document["judge"] = {
        "model": "openai/test-judge",
        "api_base": slow_judge.url,
        "api_key": "test-key",
        "timeout_s": 240,
    }
    bodies = [encode(agent_spans([DEMO_RUNS[0]])).SerializeToString() for _ in range(TRACES)]
    refused = 0
    with OtlpCapture() as capture:
        document["sidecar"]["export"]["endpoint"] = capture.endpoint
        with RunningSidecar(document) as sidecar:
            for body in bodies:
                try:
                    send_grpc(sidecar.grpc_endpoint, body)
                except grpc.RpcError:
                    refused += 1
                time.sleep(0.02)  # a steady stream: 40 traces in about a second
            assert capture.wait_for(lambda: quick_evaluations(capture) >= TRACES, timeout_s=50)
            # Every run's quick checks went out while the judge had answered none of them.
            judged = judged_evaluations(capture)
    assert refused == 0
    assert quick_evaluations(capture) == TRACES
    assert judged == 0
