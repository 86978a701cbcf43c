"""Inline mode holds back the spans of runs of a vocabulary inferred from the trace as it holds run
spans a reader's markers spot: they go downstream once, with their scores as attributes. Over real
OTLP on loopback, the shipped descriptions withheld, so the corpus stands for a framework the
project never saw."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from otel_scorers import conventions
from otel_scorers.otlp.decode import parse_json_request
from tests.otlp_capture import OtlpCapture, attrs
from tests.sidecar.test_sidecar_inferred_runs import read_from_files
from tests.sidecar_harness import RunningSidecar, send_grpc, sidecar_document

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


@pytest.fixture
def scores() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


@pytest.fixture
def downstream() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


@contextmanager
def inline_without_descriptions(scores: OtlpCapture, downstream: OtlpCapture) -> Iterator[RunningSidecar]:
    forward = {"endpoint": downstream.endpoint, "protocol": "grpc", "timeout_s": 2}
    document = sidecar_document(
        scores.endpoint, None, mode="inline", forward=forward, decision_wait_s=0.1, hold_timeout_s=30
    )
    try:
        with RunningSidecar(document) as sidecar:
            conventions.use_descriptions((), withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
            yield sidecar
    finally:
        conventions.use_descriptions(())


@pytest.mark.parametrize("corpus", ["langfuse", "genkit"])
def test_the_span_of_an_inferred_run_goes_downstream_once_with_its_scores(
    scores: OtlpCapture, downstream: OtlpCapture, corpus: str
) -> None:
    path = TRACES / corpus / "tool_then_answer.json"
    request = parse_json_request(path.read_bytes())
    sent = sum(len(scope.spans) for resource in request.resource_spans for scope in resource.scope_spans)
    conventions.use_descriptions((), withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
    try:
        (run,) = read_from_files([path])
    finally:
        conventions.use_descriptions(())
    assert run.convention.startswith("inferred:")
    with inline_without_descriptions(scores, downstream) as sidecar:
        send_grpc(sidecar.grpc_endpoint, request.SerializeToString())
        assert downstream.wait_for(lambda: len(downstream.span_list()) >= sent)
    forwarded = downstream.span_list()
    assert len(forwarded) == sent
    (run_span,) = [span for span in forwarded if span.span_id == run.span_id.to_bytes(8, "big")]
    held = attrs(run_span.attributes)
    assert held["otel_scorers.label.called_tool"] == "pass"
    assert held["otel_scorers.label.says-sunny"] == "pass"
