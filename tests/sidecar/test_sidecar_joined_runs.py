"""Over real OTLP on loopback: traces of an instrumentation that writes no span for an agent's run
and starts a trace at each model call (OpenLIT's LlamaIndex instrumentation) are joined by the
sidecar into the run their calls make, scored once, and the scores go to the run's first call."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from otel_scorers.demos.example_agent import DEMO_RUNS
from otel_scorers.otlp.decode import parse_json_request, span_records
from otel_scorers.sidecar.jobs import ThreadScoring
from otel_scorers.span_record import OWN_SCOPE
from tests.chain_stream import chain_call, plain_trace
from tests.otlp_capture import OtlpCapture, attrs
from tests.sidecar_harness import (
    SCORERS,
    RunningSidecar,
    agent_spans,
    encode,
    metrics_text,
    sample,
    send_grpc,
    sidecar_document,
)
from tests.waiting import wait_until

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "openlit-llamaindex"


@pytest.fixture
def capture() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


def body_of(scenario: str) -> bytes:
    encoded: bytes = parse_json_request((CORPUS / f"{scenario}.json").read_bytes()).SerializeToString()
    return encoded


def first_model_call(scenario: str) -> tuple[int, int]:
    """The trace and span id of the scenario's first model call that carries its request."""
    spans = span_records(parse_json_request((CORPUS / f"{scenario}.json").read_bytes()))
    first = min(
        (span for span in spans if "gen_ai.input.messages" in span.attributes), key=lambda span: span.start_ns
    )
    return first.trace_id, first.span_id


@pytest.mark.parametrize("scoring_process", [True, False], ids=["scoring-process", "in-process-engine"])
def test_model_calls_in_separate_traces_are_scored_once_as_the_run_they_make(
    capture: OtlpCapture, scoring_process: bool
) -> None:
    document = sidecar_document(
        capture.endpoint, decision_wait_s=0.1, max_wait_s=0.3, scoring_process=scoring_process
    )
    with RunningSidecar(document) as sidecar:
        # A lone model call of an agent that used no tool (no evidence of an agent: no run), then
        # a run whose request is in one trace and whose answer, after the tool's result, in another.
        send_grpc(sidecar.grpc_endpoint, body_of("no_tool"))
        send_grpc(sidecar.grpc_endpoint, body_of("tool_then_answer"))
        assert capture.wait_for(
            lambda: len([s for _, scope, s in capture.spans() if scope == OWN_SCOPE]) >= len(SCORERS)
        )
    evaluations = [span for _, scope, span in capture.spans() if scope == OWN_SCOPE]
    assert len(evaluations) == len(SCORERS)  # one run scored: none for the lone call
    trace_id, span_id = first_model_call("tool_then_answer")
    for span in evaluations:  # children of the run's first call, in its trace
        assert int.from_bytes(span.trace_id, "big") == trace_id
        assert int.from_bytes(span.parent_span_id, "big") == span_id
    values = {
        attrs(span.attributes)["gen_ai.evaluation.name"]: attrs(span.attributes)[
            "gen_ai.evaluation.score.value"
        ]
        for span in evaluations
    }
    # The tool was asked for in the first trace, its result and the answer are in the second.
    assert values == {"no_tool_errors": 1.0, "called_tool": 1.0, "says-sunny": 1.0}


def evaluations(capture: OtlpCapture) -> list[Any]:
    return [span for _, scope, span in capture.spans() if scope == OWN_SCOPE]


@pytest.mark.parametrize("scoring_process", [True, False], ids=["scoring-process", "in-process-engine"])
def test_a_stream_opening_many_long_chains_is_held_within_the_join_bytes_and_other_traces_are_scored(
    capture: OtlpCapture, scoring_process: bool
) -> None:
    bound = 1024 * 1024
    document = sidecar_document(
        capture.endpoint,
        decision_wait_s=0.05,
        max_wait_s=0.1,
        scoring_process=scoring_process,
        join_max_bytes=bound,
    )
    agent_traces: set[bytes] = set()
    held: list[int] = []
    with RunningSidecar(document) as sidecar:
        chains = (
            sidecar.service.scoring.chains if isinstance(sidecar.service.scoring, ThreadScoring) else None
        )
        # 30 conversations whose every model call asks for one more tool, in traces of their own:
        # 180 calls of 3 KB and more, over 5 MB held open without the bound; an agent's traces
        # (with their run span) and an application's plain traces among them.
        for step in range(6):
            for conversation in range(30):
                send_grpc(sidecar.grpc_endpoint, chain_call(conversation, step, 3_000).SerializeToString())
                if chains is not None:
                    held.append(chains.open_bytes)
            send_grpc(sidecar.grpc_endpoint, plain_trace(step).SerializeToString())
            agent = encode(agent_spans(DEMO_RUNS[:1]))
            agent_traces.add(agent.resource_spans[0].scope_spans[0].spans[0].trace_id)
            send_grpc(sidecar.grpc_endpoint, agent.SerializeToString())
        # A run joined across traces, after the stream: still joined and scored.
        send_grpc(sidecar.grpc_endpoint, body_of("tool_then_answer"))
        joined = first_model_call("tool_then_answer")[0].to_bytes(16, "big")

        def scored(trace_id: bytes) -> bool:
            return sum(span.trace_id == trace_id for span in evaluations(capture)) == len(SCORERS)

        assert capture.wait_for(lambda: all(scored(trace_id) for trace_id in {*agent_traces, joined}))

        def bytes_dropped() -> float:
            text = metrics_text(sidecar.http_url)
            return sample(text, "otel_scorers_runs_total", otel_scorers_reason="chain_bytes")

        wait_until(lambda: bytes_dropped() > 0, 60, "chains closed for the join's bytes, counted")
        if chains is not None:
            held.append(chains.open_bytes)
            assert max(held) <= bound
            assert chains.tally.closed_for_bytes == bytes_dropped()


def test_a_trace_without_a_run_span_that_no_convention_reads_is_let_go_unjoined_and_counted(
    capture: OtlpCapture,
) -> None:
    document = sidecar_document(capture.endpoint, decision_wait_s=0.05, max_wait_s=0.1, scoring_process=False)
    with RunningSidecar(document) as sidecar:
        chains = (
            sidecar.service.scoring.chains if isinstance(sidecar.service.scoring, ThreadScoring) else None
        )
        assert chains is not None
        # Two traces of an application's HTTP and database work, then a run joined across traces.
        send_grpc(sidecar.grpc_endpoint, plain_trace(0).SerializeToString())
        send_grpc(sidecar.grpc_endpoint, plain_trace(1).SerializeToString())
        send_grpc(sidecar.grpc_endpoint, body_of("tool_then_answer"))
        assert capture.wait_for(lambda: len(evaluations(capture)) >= len(SCORERS))

        def let_go() -> float:
            text = metrics_text(sidecar.http_url)
            return sample(text, "otel_scorers_spans_dropped_total", otel_scorers_reason="no_run_span")

        wait_until(lambda: let_go() == 4, 60, "the plain traces' spans let go, counted")
        # Counted as traces in which no run was found, by their root span's scope.
        text = metrics_text(sidecar.http_url)
        scope = "opentelemetry.instrumentation.fastapi"
        assert sample(text, "otel_scorers_traces_no_run_total", otel_scorers_scope=scope) == 2
    assert chains.tally.runs == 1  # the joined run, scored: its traces were handed to the join
    assert len(evaluations(capture)) == len(SCORERS)
