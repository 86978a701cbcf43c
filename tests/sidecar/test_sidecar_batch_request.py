"""The request a batch of ready traces is handed to a scoring process in (`trace_batches`,
written from the spans' own bytes by `request_bytes`) carries each span whole, under its own
resource, scope and schema URL, as the SDK's exporter sent them, and each span comes back in its
own trace's job, whether given to it by its place or by its trace id."""

from __future__ import annotations

import pickle

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers.sidecar import span_marks
from otel_scorers.sidecar.batch_assembler import BufferedTrace
from otel_scorers.sidecar.otlp_spans import Batch, Origin, OtlpSpan, trace_records
from otel_scorers.sidecar.trace_batches import decode_batch, encode_batch
from otel_scorers.span_record import SpanRecord

#: What a span is sent under and the span itself, each as its serialized bytes.
Sent = tuple[bytes, bytes, str, bytes]


def sent_spans() -> list[ReadableSpan]:
    """Runs of two services, each traced by two instrumentations (one with a schema URL, a
    version and attributes of its own), a long text among the attributes."""
    exporter = InMemorySpanExporter()
    for service in ("weather", "travel"):
        provider = TracerProvider(resource=Resource.create({"service.name": service, "host.cores": 2}))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        agent = provider.get_tracer("agent")
        tools = provider.get_tracer(
            "tools", "1.2.0", schema_url="https://opentelemetry.io/schemas/1.26.0", attributes={"team": "x"}
        )
        for run in range(3):
            with agent.start_as_current_span(
                f"invoke_agent {service}-{run}", attributes={"gen_ai.operation.name": "invoke_agent"}
            ):
                with tools.start_as_current_span("execute_tool get_weather", attributes={"n": run}):
                    pass
                with agent.start_as_current_span("chat", attributes={"gen_ai.input.messages": "x" * 5000}):
                    pass
    return list(exporter.get_finished_spans())


def received(request: ExportTraceServiceRequest) -> list[Sent]:
    return [
        (
            resource_spans.resource.SerializeToString(),
            scope_spans.scope.SerializeToString(),
            scope_spans.schema_url,
            span.SerializeToString(),
        )
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]


def buffered(request: ExportTraceServiceRequest) -> list[tuple[int, BufferedTrace]]:
    """The request's traces as the receiving process buffers them, by job id."""
    batch = Batch(0)
    traces: dict[bytes, BufferedTrace] = {}
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            origin = Origin(resource_spans.resource, scope_spans.scope, scope_spans.schema_url, batch)
            for span in scope_spans.spans:
                trace = traces.setdefault(span.trace_id, BufferedTrace(span.trace_id, 0.0, 0.0))
                item = OtlpSpan(span, origin)
                trace.spans.append(item)
                if span_marks.is_run_span(span):
                    trace.run_spans.append(item)
    return list(enumerate(traces.values()))


def span_id(record: SpanRecord) -> int:
    return record.span_id


def test_a_batch_carries_each_span_under_its_own_resource_and_scope() -> None:
    sent = encode_spans(sent_spans())
    traces = buffered(ExportTraceServiceRequest.FromString(sent.SerializeToString()))
    assert len(traces) == 6 and all(trace.run_spans for _, trace in traces)
    kind, jobs, payload, places = pickle.loads(encode_batch(traces))
    assert kind == "jobs" and jobs == [(job_id, trace.key) for job_id, trace in traces]
    handed = ExportTraceServiceRequest.FromString(payload)
    assert sorted(received(handed)) == sorted(received(sent))
    assert len(handed.resource_spans) == 4  # one for each of the four origins
    by_trace = {trace.key: [item.span for item in trace.spans] for _, trace in traces}
    by_trace_items = {trace.key: trace.spans for _, trace in traces}
    for given in (decode_batch(jobs, payload, places), decode_batch(jobs, payload)):
        assert [job_id for job_id, _ in given] == [job_id for job_id, _ in traces]
        for job_id, spans in given:
            expected = by_trace[traces[job_id][1].key]
            assert sorted(item.span.span_id for item in spans) == sorted(span.span_id for span in expected)
            # Read with the scoring process's schema, each span is the record it is read as by
            # opentelemetry-proto's.
            assert sorted(trace_records(spans), key=span_id) == sorted(
                trace_records(by_trace_items[traces[job_id][1].key]), key=span_id
            )
            assert all(item.span.trace_id == traces[job_id][1].key for item in spans)
