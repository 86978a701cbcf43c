"""Received spans converted to records (`trace_records`) carry what the SDK recorded: every kind
of attribute value as the SDK holds it, and each span's own trace id."""

from __future__ import annotations

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util.types import AttributeValue

from otel_scorers.sidecar.jobs import build_trace_runs
from otel_scorers.sidecar.otlp_spans import OtlpSpan, trace_records
from otel_scorers.sidecar.trace_batches import decode_batch

#: One of every kind of value the SDK records, the ones a reader could take for another among
#: them (zero, negative, false, an empty text).
VALUES: dict[str, AttributeValue] = {
    "text": "sunny",
    "empty": "",
    "tokens": 42,
    "zero": 0,
    "negative": -7,
    "large": 2**62,
    "yes": True,
    "no": False,
    "ratio": 0.25,
    "nought": 0.0,
    "texts": ("a", "b"),
    "numbers": (1, 0, -2),
    "flags": (True, False),
}


def ids(span: ReadableSpan) -> tuple[int, int]:
    context = span.get_span_context()
    assert context is not None
    return context.trace_id, context.span_id


def recorded_traces() -> tuple[list[ReadableSpan], list[tuple[int, list[OtlpSpan]]]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent")
    for run in range(2):
        with (
            tracer.start_as_current_span(f"invoke_agent weather-{run}", attributes=VALUES),
            tracer.start_as_current_span("execute_tool get_weather", attributes={"tokens": run}),
        ):
            pass
    spans = list(exporter.get_finished_spans())
    trace_ids = list(dict.fromkeys(ids(span)[0].to_bytes(16, "big") for span in spans))
    payload = encode_spans(spans).SerializeToString()
    return spans, decode_batch(list(enumerate(trace_ids)), payload)


def test_received_attribute_values_are_the_ones_the_sdk_recorded() -> None:
    spans, traces = recorded_traces()
    sent = {ids(span): span for span in spans}
    converted = 0
    for _, received in traces:
        for record in trace_records(received):
            span = sent[(record.trace_id, record.span_id)]
            expected = {
                key: list(value) if isinstance(value, tuple) else value
                for key, value in (span.attributes or {}).items()
            }
            assert record.attributes == expected
            for key, value in record.attributes.items():
                assert type(value) is type(expected[key]), key
            converted += 1
    assert converted == len(spans) == 4
    for _, received in traces:
        assert [item.record() for item in received] == trace_records(received)


def test_each_record_carries_its_own_traces_id() -> None:
    spans, traces = recorded_traces()
    expected = {ids(span)[1]: ids(span)[0] for span in spans}
    assert len(set(expected.values())) == 2
    for _, received in traces:
        records = trace_records(received)
        assert len(records) == 2
        assert {record.span_id: record.trace_id for record in records} == {
            record.span_id: expected[record.span_id] for record in records
        }
        runs = build_trace_runs(received)
        assert [run.trace_id for run in runs] == [records[0].trace_id]
