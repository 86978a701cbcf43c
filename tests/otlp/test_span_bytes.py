"""Spans read with the scoring process's schema (`span_bytes_schema`: each attribute as its
key-value's bytes) convert to the records opentelemetry-proto's classes convert them to, whether
a key-value is read anew or remembered from an earlier span, and what is remembered is bounded."""

from __future__ import annotations

from dataclasses import fields

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode
from opentelemetry.util.types import AttributeValue

from otel_scorers.otlp import span_bytes
from otel_scorers.otlp.decode import span_records
from otel_scorers.otlp.span_bytes_schema import BytesRequest
from otel_scorers.span_record import SpanRecord

ATTRIBUTES: dict[str, AttributeValue] = {
    "gen_ai.operation.name": "chat",
    "gen_ai.usage.input_tokens": 12,
    "zero": 0,
    "empty": "",
    "yes": True,
    "ratio": 0.5,
    "texts": ("a", "b"),
    "gen_ai.input.messages": "x" * 500,
}
STATUSES = (
    Status(StatusCode.UNSET),
    Status(StatusCode.OK),
    Status(StatusCode.ERROR),
    Status(StatusCode.ERROR, "the tool timed out"),
)


def sdk_spans(count: int) -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent")
    for number in range(count):
        with tracer.start_as_current_span(f"chat {number}", attributes=ATTRIBUTES) as span:
            span.set_attribute("number", number)
            span.add_event("tokens", {"n": number})
            span.set_status(STATUSES[number % len(STATUSES)])
    return list(exporter.get_finished_spans())


def bytes_records(payload: bytes) -> list[SpanRecord]:
    records = []
    for resource_spans in BytesRequest.FromString(payload).resource_spans:
        resource = {"service.name": "unknown_service"}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                trace_id = int.from_bytes(span.trace_id, "big")
                records.append(span_bytes.bytes_span_record(span, resource, scope_spans.scope.name, trace_id))
    return records


def expected_records(payload: bytes) -> list[SpanRecord]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    records = list(span_records(ExportTraceServiceRequest.FromString(payload)))
    for record in records:
        record.resource = {"service.name": "unknown_service"}
    return records


def test_spans_read_from_their_attributes_bytes_are_the_records_protobuf_reads() -> None:
    payload = encode_spans(sdk_spans(8)).SerializeToString()
    expected = expected_records(payload)
    assert {record.status for record in expected} == {"unset", "ok", "error"}
    assert "the tool timed out" in {record.status_message for record in expected}
    first = bytes_records(payload)  # key-values read anew, the short ones remembered
    again = bytes_records(payload)  # the same spans, the short key-values remembered
    assert first == expected and again == expected
    # Records are made through their slots: every field is set.
    assert all(hasattr(record, field.name) for record in again for field in fields(SpanRecord))
    for record in again:
        for key, value in record.attributes.items():
            assert type(value) is type(expected[0].attributes[key]), key


def test_a_list_value_is_made_for_each_span() -> None:
    payload = encode_spans(sdk_spans(2)).SerializeToString()
    one, other = bytes_records(payload)
    assert one.attributes["texts"] == ["a", "b"]
    assert one.attributes["texts"] is not other.attributes["texts"]


def test_remembered_key_values_are_bounded() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent")
    for number in range(span_bytes.MAX_REMEMBERED + 10):
        with tracer.start_as_current_span("tool", attributes={"gen_ai.tool.call.id": f"call_{number}"}):
            pass
    payload = encode_spans(list(exporter.get_finished_spans())).SerializeToString()
    records = bytes_records(payload)
    assert [record.attributes["gen_ai.tool.call.id"] for record in records] == [
        f"call_{number}" for number in range(span_bytes.MAX_REMEMBERED + 10)
    ]
    assert 0 < span_bytes.remembered_count() <= span_bytes.MAX_REMEMBERED


def test_a_key_is_one_string_on_every_span_however_it_is_read() -> None:
    # Read through opentelemetry-proto's classes and from the key-values' bytes, a key-value too
    # long to be remembered (the messages) included: the conventions compare keys by identity first.
    payload = encode_spans(sdk_spans(2)).SerializeToString()
    for one, other in (expected_records(payload), bytes_records(payload)):
        assert set(one.attributes) == set(other.attributes)
        for key in ("gen_ai.input.messages", "gen_ai.operation.name", "texts"):
            ours = next(found for found in one.attributes if found == key)
            theirs = next(found for found in other.attributes if found == key)
            assert ours is theirs, key
