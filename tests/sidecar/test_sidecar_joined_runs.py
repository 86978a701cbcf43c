"""Over real OTLP on loopback: traces of an instrumentation that writes no span for an agent's run
and starts a trace at each model call (OpenLIT's LlamaIndex instrumentation) are joined by the
sidecar into the run their calls make, scored once, and the scores go to the run's first call."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from otel_scorers.otlp.decode import parse_json_request, span_records
from otel_scorers.span_record import OWN_SCOPE
from tests.otlp_capture import OtlpCapture, attrs
from tests.sidecar_harness import SCORERS, RunningSidecar, send_grpc, sidecar_document

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
