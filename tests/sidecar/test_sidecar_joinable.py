"""Which traces without a run span the sidecar hands to the join of model calls: those holding a
span some instrumentation convention reads, the user's descriptions among them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_scorers import conventions
from otel_scorers.otlp.decode import parse_json_request
from otel_scorers.sidecar.joinable import holds_convention_span
from otel_scorers.sidecar.otlp_spans import Batch, Origin, OtlpSpan
from tests.chain_stream import chain_call, plain_trace

FIXTURE = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "traces"
    / "openllmetry-haystack"
    / "tool_then_answer.json"
)


def spans_of(request: ExportTraceServiceRequest) -> list[OtlpSpan]:
    found = []
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            origin = Origin(resource_spans.resource, scope_spans.scope, scope_spans.schema_url, Batch(0))
            found.extend(OtlpSpan(span, origin) for span in scope_spans.spans)
    return found


@pytest.fixture
def described_http() -> Iterator[None]:
    # A user's description of an instrumentation writing under the HTTP server's scope.
    conventions.use_descriptions(
        [
            {
                "name": "http-agent",
                "scope": "opentelemetry.instrumentation.fastapi",
                "run": {"input": "url.path"},
            }
        ]
    )
    yield
    conventions.use_descriptions(())


def test_a_trace_of_http_and_database_work_holds_no_span_a_convention_reads() -> None:
    for number in range(3):  # its kinds' verdicts remembered after the first
        assert not holds_convention_span(spans_of(plain_trace(number)))


def test_a_trace_holding_a_model_call_is_handed_to_the_join() -> None:
    assert holds_convention_span(spans_of(chain_call(0, 0, 10)))
    # A trace of each Haystack model call, as OpenLLMetry writes them (flattened messages).
    request = parse_json_request(FIXTURE.read_bytes())
    spans = spans_of(request)
    traces = {item.span.trace_id for item in spans}
    assert len(traces) > 1
    for trace_id in traces:
        assert holds_convention_span([item for item in spans if item.span.trace_id == trace_id])


def test_the_users_descriptions_are_asked_and_the_verdicts_of_earlier_ones_forgotten(
    described_http: None,
) -> None:
    assert holds_convention_span(spans_of(plain_trace(0)))
    conventions.use_descriptions(())
    assert not holds_convention_span(spans_of(plain_trace(0)))
