"""Assembly across requests: spans of a trace in any order and in several requests, decision_wait,
max wait, late spans, sampling from the trace id alone, bounded buffers."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan

from otel_scorers.config import SidecarConfig
from otel_scorers.demos.example_agent import DEMO_RUNS, ScriptedRun
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.selection.sampling import threshold_for
from otel_scorers.sidecar.batch_assembler import BatchAssembler, Limits
from otel_scorers.sidecar.intake import Intake, Refused
from otel_scorers.sidecar.jobs import run_subtrees
from otel_scorers.sidecar.request_scan import scan
from otel_scorers.span_record import OWN_SCOPE
from tests.otlp_capture import OtlpCapture, attrs
from tests.sidecar.test_sidecar_errors import grpc_export, post
from tests.sidecar_harness import RunningSidecar, agent_spans, encode, is_run, sidecar_document
from tests.waiting import wait_until

PROTOBUF = {"Content-Type": "application/x-protobuf"}

SETTINGS = SidecarConfig()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def request_of(spans: list[ReadableSpan]) -> ExportTraceServiceRequest:
    return encode(spans)


def metrics() -> tuple[PipelineMetrics, InMemoryMetricReader]:
    reader = InMemoryMetricReader()
    return PipelineMetrics(MeterProvider(metric_readers=[reader])), reader


def counter_total(reader: InMemoryMetricReader, name: str, **attributes: Any) -> int:
    data = reader.get_metrics_data()
    total = 0
    for resource_metrics in data.resource_metrics if data else ():
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                if metric.name == name:
                    for point in metric.data.data_points:
                        if all(point.attributes.get(k) == v for k, v in attributes.items()):
                            total += int(point.value)
    return total


def assembler(clock: Clock, **limits: int) -> tuple[BatchAssembler, InMemoryMetricReader]:
    """An assembler with the sidecar's default limits but for `limits`."""
    pipeline_metrics, reader = metrics()
    given = {
        "max_traces": SETTINGS.max_traces,
        "max_spans": SETTINGS.max_spans,
        "max_bytes": SETTINGS.max_bytes,
    }
    built = BatchAssembler(
        pipeline_metrics,
        Limits(**{**given, **limits}),
        decision_wait_s=2.0,
        max_wait_s=10.0,
        late_memory=100,
        clock=clock,
    )
    return built, reader


def commit(built: BatchAssembler, spans: list[ReadableSpan], rate: float = 1.0) -> None:
    request = request_of(spans)
    built.commit(scan(request, request.ByteSize(), threshold_for(rate)))


# ---- the assembler alone, on a clock the test moves -------------------------------------------


def test_a_trace_is_ready_only_after_decision_wait_without_new_spans() -> None:
    clock = Clock()
    built, _ = assembler(clock)
    spans = agent_spans(DEMO_RUNS[:1])
    commit(built, [span for span in spans if not is_run(span)])
    clock.now += 1.5
    commit(built, [span for span in spans if is_run(span)])
    clock.now += 1.5  # 3 s after the first span, but only 1.5 s after the last one
    built.poll()
    assert built.take_ready() is None
    clock.now += 0.6
    built.poll()
    ready = built.take_ready()
    assert ready is not None
    assert len(ready.spans) == len(spans)
    assert len(ready.run_spans) == 1


def test_a_trace_that_never_goes_quiet_is_ready_at_max_wait() -> None:
    clock = Clock()
    built, _ = assembler(clock)
    spans = agent_spans(DEMO_RUNS[:1])
    commit(built, spans)
    for _ in range(11):
        clock.now += 1.0
        commit(built, spans[:1])  # keeps arriving (a retried or a chatty trace)
        built.poll()
    assert built.take_ready() is not None


def test_a_trace_without_a_run_span_waits_for_it_until_max_wait() -> None:
    clock = Clock()
    built, _ = assembler(clock)
    spans = agent_spans(DEMO_RUNS[:1])
    children = [span for span in spans if not is_run(span)]
    commit(built, children)
    clock.now += 5.0  # past decision_wait: still kept, the root span is exported last
    built.poll()
    assert built.take_ready() is None
    assert built.buffered_spans == len(children)
    commit(built, [span for span in spans if is_run(span)])
    clock.now += 2.1
    built.poll()
    ready = built.take_ready()
    assert ready is not None and len(ready.spans) == len(spans)


def test_a_run_less_trace_is_let_go_after_max_wait() -> None:
    clock = Clock()
    built, _ = assembler(clock)
    children = [span for span in agent_spans(DEMO_RUNS[:1]) if not is_run(span)]
    commit(built, children)
    clock.now += 10.5
    built.poll()
    assert built.take_ready() is None
    assert built.buffered_spans == 0
    assert built.buffered_bytes == 0


def test_children_let_go_at_max_wait_are_counted_and_their_late_run_is_not_scored_without_them() -> None:
    """The run span of a trace whose tool spans were let go comes late: scored alone, it would
    fail called_tool although the tool was called. It counts as late, and the children as dropped."""
    clock = Clock()
    built, reader = assembler(clock)
    spans = agent_spans(DEMO_RUNS[:1])
    children = [span for span in spans if not is_run(span)]
    commit(built, children)
    clock.now += 10.5
    built.poll()
    assert counter_total(
        reader, "otel_scorers.spans.dropped", **{"otel_scorers.reason": "no_run_span"}
    ) == len(children)
    commit(built, [span for span in spans if is_run(span)])
    clock.now += 2.5
    built.poll()
    assert built.take_ready() is None, "the run is not scored from a trace that lost its children"
    assert built.buffered_spans == 0
    assert counter_total(reader, "otel_scorers.late_spans") == 1


def test_run_less_spans_let_go_at_shutdown_are_counted() -> None:
    clock = Clock()
    built, reader = assembler(clock)
    children = [span for span in agent_spans(DEMO_RUNS[:1]) if not is_run(span)]
    commit(built, children)
    built.drain()
    assert counter_total(
        reader, "otel_scorers.spans.dropped", **{"otel_scorers.reason": "no_run_span"}
    ) == len(children)


def test_spans_after_the_decision_are_counted_as_late_not_buffered() -> None:
    clock = Clock()
    built, reader = assembler(clock)
    spans = agent_spans(DEMO_RUNS[:1])
    commit(built, spans)
    clock.now += 2.5
    built.poll()
    ready = built.take_ready()
    assert ready is not None
    built.release(ready)
    commit(built, spans[:2])
    assert built.buffered_spans == 0
    assert counter_total(reader, "otel_scorers.late_spans") == 2


def test_traces_no_binding_samples_are_never_buffered() -> None:
    clock = Clock()
    built, _ = assembler(clock)
    commit(built, agent_spans(DEMO_RUNS), rate=0.0)
    assert built.buffered_spans == 0
    assert built.buffered_bytes == 0
    clock.now += 60
    built.poll()
    assert built.take_ready() is None


def test_sampling_keeps_whole_traces_by_trace_id() -> None:
    clock = Clock()
    built, _ = assembler(clock)
    spans = agent_spans([DEMO_RUNS[0]] * 200)
    commit(built, spans, rate=0.25)
    clock.now += 3
    built.poll()
    kept = []
    while (trace := built.take_ready()) is not None:
        kept.append(trace)
    assert 20 < len(kept) < 90  # about a quarter of 200 traces, each whole
    assert all(len(trace.spans) == len(spans) // 200 for trace in kept)


def test_memory_is_accounted_per_request_and_released_with_the_trace() -> None:
    clock = Clock()
    built, _ = assembler(clock)
    spans = agent_spans(DEMO_RUNS[:2])
    request = request_of(spans)
    result = scan(request, 5000, 0)
    built.commit(result)
    expected = result.batch.size  # the request is counted once, whichever trace holds it
    assert expected > 5000
    assert built.buffered_bytes == expected
    clock.now += 3
    built.poll()
    first, second = built.take_ready(), built.take_ready()
    assert first is not None and second is not None
    built.release(first)
    assert built.buffered_bytes == expected  # the request is still referenced by the second trace
    built.release(second)
    assert built.buffered_bytes == 0
    assert built.buffered_spans == 0


def test_a_request_mostly_not_sampled_is_not_kept_for_its_few_sampled_spans() -> None:
    request = request_of(agent_spans([DEMO_RUNS[0]] * 200))
    size = request.ByteSize()
    result = scan(request, size, threshold_for(0.05))
    kept = [item for group in result.groups.values() for item in group]
    assert 0 < len(kept) < 120  # about 5% of 800 spans
    # The kept spans were copied out: the request can go, and only their own size counts.
    whole = scan(request_of(agent_spans([DEMO_RUNS[0]] * 200)), size, 0).batch.size
    assert result.batch.size < whole / 5
    request.Clear()
    assert all(len(item.span.trace_id) == 16 and item.span.name for item in kept)
    assert {item.origin.resource_attributes()["service.name"] for item in kept} == {"weather-service"}


def test_at_the_limit_run_less_traces_go_first_and_then_requests_are_refused() -> None:
    clock = Clock()
    built, reader = assembler(clock, max_traces=3)
    runs = agent_spans(DEMO_RUNS[:2])
    orphans = [span for span in agent_spans(DEMO_RUNS[2:3]) if not is_run(span)]
    commit(built, orphans)
    clock.now += 2.5  # quiet, still waiting for its run span
    built.poll()
    commit(built, runs)
    assert built.over_limit() is not None
    assert built.make_room() is None  # the run-less trace was let go
    assert counter_total(
        reader, "otel_scorers.spans.dropped", **{"otel_scorers.reason": "no_run_evicted"}
    ) == len(orphans)
    commit(built, agent_spans(DEMO_RUNS[3:4]))
    assert built.make_room() is not None  # only traces with runs left: refuse, do not drop


def test_a_full_intake_says_so_before_a_request_is_sorted_out_and_refuses_it_whole() -> None:
    clock = Clock()
    built, _ = assembler(clock, max_traces=2)
    intake = Intake(built, threshold_for(1.0), PipelineMetrics(MeterProvider()), SETTINGS.retry_after_s)
    assert intake.has_room()
    commit(built, agent_spans(DEMO_RUNS[:2]))
    assert not intake.has_room()  # the receivers then only decode it, to count its spans
    request, buffered = request_of(agent_spans(DEMO_RUNS[2:3])), built.buffered_spans
    with pytest.raises(Refused) as refused:
        asyncio.run(intake.export(request, None, request.ByteSize()))
    assert refused.value.kind == "busy"
    assert built.buffered_spans == buffered
    intake.closing = True
    assert not intake.has_room()


def test_runs_are_built_from_run_subtrees_only() -> None:
    spans = agent_spans(DEMO_RUNS[:1])
    request = request_of(spans)
    # An unrelated span in the same trace (not under the run) is never converted.
    stray = request.resource_spans[0].scope_spans[0].spans.add()
    stray.CopyFrom(request.resource_spans[0].scope_spans[0].spans[0])
    stray.span_id = b"\x42" * 8
    stray.parent_span_id = b"\x43" * 8
    result = scan(request, request.ByteSize(), 0)
    (items,) = result.groups.values()
    (runs,) = result.runs.values()
    chosen = run_subtrees(items, runs)
    assert len(items) == len(spans) + 1
    assert {item.span.span_id for item in chosen} == {
        span.context.span_id.to_bytes(8, "big") for span in spans
    }


# ---- over the wire -----------------------------------------------------------------------------


@pytest.fixture
def capture() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


def evaluations(capture: OtlpCapture) -> list[Any]:
    return [span for _, scope, span in capture.spans() if scope == OWN_SCOPE]


def test_spans_split_over_requests_and_protocols_out_of_order_are_scored_once(capture: OtlpCapture) -> None:
    scripts = [
        DEMO_RUNS[0],
        DEMO_RUNS[2],  # the failing tool: its tool span must meet its run span across requests
        ScriptedRun(
            "Weather in Oslo and Lima?",
            [("get_weather", {"city": "Oslo"}), ("get_time", {"city": "Lima"})],
            "Snow.",
        ),
    ]
    spans = agent_spans(scripts)
    random.Random(7).shuffle(spans)
    thirds = [spans[0::3], spans[1::3], spans[2::3]]
    with RunningSidecar(sidecar_document(capture.endpoint, decision_wait_s=0.5)) as sidecar:
        grpc_export(sidecar, request_of(thirds[0]).SerializeToString(), token=None)
        status, _ = post(sidecar, request_of(thirds[1]).SerializeToString(), PROTOBUF, token=None)
        assert status == 200
        grpc_export(sidecar, request_of(thirds[2]).SerializeToString(), token=None)
        assert capture.wait_for(lambda: len(evaluations(capture)) >= 9)
    found = evaluations(capture)
    assert len(found) == 9  # 3 runs x 3 scorers, each run scored exactly once
    labels = {
        (span.parent_span_id, attrs(span.attributes)["gen_ai.evaluation.name"]): attrs(span.attributes).get(
            "gen_ai.evaluation.score.label"
        )
        for span in found
    }
    runs = {span.context.span_id.to_bytes(8, "big"): span for span in spans if is_run(span)}
    by_question = {
        runs[parent].attributes["gen_ai.input.messages"]: label  # type: ignore[index]
        for (parent, name), label in labels.items()
        if name == "no_tool_errors"
    }
    assert sorted(by_question.values()) == ["fail", "pass", "pass"]


def test_late_spans_are_counted_on_the_metrics_endpoint(capture: OtlpCapture) -> None:
    spans = agent_spans(DEMO_RUNS[:1])
    with RunningSidecar(sidecar_document(capture.endpoint)) as sidecar:
        grpc_export(sidecar, request_of(spans).SerializeToString(), token=None)
        assert capture.wait_for(lambda: len(evaluations(capture)) >= 3)
        grpc_export(sidecar, request_of(spans[:1]).SerializeToString(), token=None)

        def late() -> list[str]:
            text = sidecar.service.telemetry.prometheus_text().decode()
            return [line for line in text.splitlines() if line.startswith("otel_scorers_late_spans")]

        # counted once the sidecar has taken the span in, which the reply need not wait for
        wait_until(late, message="otel_scorers_late_spans on the metrics endpoint")
        counted = late()
    assert float(counted[0].split()[-1]) == 1.0


def test_our_own_evaluation_spans_sent_back_are_accepted_but_never_buffered() -> None:
    clock = Clock()
    built, _ = assembler(clock)
    request = request_of(agent_spans(DEMO_RUNS[:1]))
    request.resource_spans[0].scope_spans[0].scope.name = OWN_SCOPE
    result = scan(request, request.ByteSize(), 0)
    assert result.accepted == result.total > 0
    assert not result.groups
    built.commit(result)
    assert built.buffered_spans == 0
