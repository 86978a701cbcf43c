"""The sidecar's screen of the spans it receives for a vocabulary inferred from the trace: a key
whose name says kind, outside the readers' namespaces, whose value names a run or a call; what
the assembler does with traces it screens in, within its limits and waits."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from otel_scorers import conventions
from otel_scorers.selection.sampling import threshold_for
from otel_scorers.sidecar import span_marks
from otel_scorers.sidecar.batch_assembler import BatchAssembler
from otel_scorers.sidecar.request_scan import scan
from otel_scorers.sidecar.span_marks import NAMES_A_CALL, NAMES_A_RUN, NO_MARK, RUN, span_mark
from tests.sidecar.test_sidecar_assembly import Clock, assembler, counter_total

SCOPE = "acme.tracing"


def span(name: str, trace_id: bytes = b"\x01" * 16, parent: bytes = b"", **attributes: str) -> Span:
    found = Span(name=name, trace_id=trace_id, span_id=os.urandom(8), parent_span_id=parent)
    for key, value in attributes.items():
        found.attributes.append(KeyValue(key=key.replace("__", "."), value=AnyValue(string_value=value)))
    return found


def mark(found: Span) -> int:
    span_marks.refresh()
    return span_mark(found)


@pytest.fixture
def acme_described() -> Iterator[None]:
    # A user's description of the vocabulary: its namespace is a reader's, never inferred.
    conventions.use_descriptions(
        [
            {
                "name": "acme",
                "marker_attributes": ["acme.kind"],
                "run": {"when": {"attributes": {"acme.kind": ["agent"]}}},
            }
        ]
    )
    yield
    conventions.use_descriptions(())


def test_a_kind_key_naming_a_run_or_a_call_is_screened_in_other_keys_are_not() -> None:
    assert mark(span("weather", acme__kind="agent")) == NAMES_A_RUN
    assert mark(span("weather", acme__meta__subtype="Workflow")) == NAMES_A_RUN
    assert mark(span("weather", acme__spanType='"AGENT"')) == NAMES_A_RUN  # JSON-quoted
    assert mark(span("get_weather", acme__kind="tool")) == NAMES_A_CALL
    assert mark(span("chat", acme__observation__type="generation")) == NAMES_A_CALL
    # A call beside a run on one span: the run is what it says.
    assert mark(span("x", acme__kind="tool", other__type="agent")) == NAMES_A_RUN
    # Kind keys of other values, keys of no kind, the readers' namespaces.
    assert mark(span("publish", messaging__message__type="request")) == NO_MARK
    assert mark(span("GET /users", http__request__method="GET")) == NO_MARK
    assert mark(span("x", gen_ai__operation__name="chat", gen_ai__output__type="text")) == NO_MARK
    # A reader's run span is a run, whatever else it carries.
    assert mark(span("Agent", openinference__span__kind="AGENT", acme__kind="tool")) == RUN


def test_a_description_of_the_vocabulary_wins_over_the_screen(acme_described: None) -> None:
    assert mark(span("weather", acme__kind="agent")) == RUN
    assert mark(span("get_weather", acme__kind="tool")) == NO_MARK
    conventions.use_descriptions(())
    assert mark(span("get_weather", acme__kind="tool")) == NAMES_A_CALL


def test_the_keys_remembered_are_bounded() -> None:
    many = span("x")
    for number in range(span_marks.MAX_REMEMBERED_KEYS + 10):
        many.attributes.append(KeyValue(key=f"acme.input.{number}", value=AnyValue(string_value="x")))
    assert mark(many) == NO_MARK
    assert mark(span("weather", acme__kind="agent")) == NAMES_A_RUN
    assert span_marks.remembered_keys() <= span_marks.MAX_REMEMBERED_KEYS


def commit(built: BatchAssembler, *spans: Span) -> None:
    request = ExportTraceServiceRequest()
    scope_spans = request.resource_spans.add().scope_spans.add()
    scope_spans.scope.name = SCOPE
    scope_spans.spans.extend(spans)
    built.commit(scan(request, request.ByteSize(), threshold_for(1.0)))


def acme_trace(trace_id: bytes, run_kind: str | None) -> list[Span]:
    root = span("weather", trace_id, acme__kind=run_kind or "chain")
    return [
        root,
        span("chat", trace_id, root.span_id, acme__kind="llm"),
        span("get_weather", trace_id, root.span_id, acme__kind="tool"),
    ]


def test_a_trace_a_kind_key_says_opens_a_run_is_ready_once_quiet() -> None:
    clock = Clock()
    built, _ = assembler(clock)  # decision_wait 2 s, max_wait 10 s, no join of calls
    commit(built, *acme_trace(b"\x02" * 16, "agent"))
    clock.now += 2.1
    built.poll()
    ready = built.take_ready()
    assert ready is not None and len(ready.spans) == 3 and not ready.run_spans


def test_a_trace_whose_kind_key_names_calls_only_is_scored_at_max_wait_without_the_join() -> None:
    clock = Clock()
    built, _ = assembler(clock)
    commit(built, *acme_trace(b"\x03" * 16, None))
    commit(built, span("GET /users", b"\x04" * 16, http__request__method="GET"))
    clock.now += 5.0
    built.poll()
    assert built.take_ready() is None  # its runs may still be marked by a span to come
    clock.now += 5.5
    built.poll()
    ready = built.take_ready()
    assert ready is not None and ready.key == b"\x03" * 16
    assert built.take_ready() is None  # the HTTP trace was let go
    assert built.buffered_spans == 3


def test_screened_traces_are_held_within_the_limits_and_counted_when_let_go() -> None:
    clock = Clock()
    built, reader = assembler(clock, max_traces=2)
    commit(built, *acme_trace(b"\x05" * 16, None))
    clock.now += 2.5  # quiet, waiting for max_wait
    built.poll()
    commit(built, *acme_trace(b"\x06" * 16, "agent"))
    assert built.over_limit() is not None
    assert built.make_room() is None  # the trace of calls alone went first
    assert (
        counter_total(reader, "otel_scorers.spans.dropped", **{"otel_scorers.reason": "no_run_evicted"}) == 3
    )
