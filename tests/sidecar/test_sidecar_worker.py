"""Scoring in a child process (`sidecar.scoring_process`, the default): the same scores as scoring
in-process, both processes' metrics on /metrics, a killed scoring process replaced with its
traces counted, and no scoring process left behind when the sidecar is killed."""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from otel_scorers.demos.example_agent import DEMO_RUNS
from otel_scorers.model import AgentRun
from otel_scorers.sidecar.batch_assembler import BufferedTrace
from otel_scorers.sidecar.jobs import job_spans
from otel_scorers.sidecar.metrics_merge import merge_prometheus_text
from otel_scorers.sidecar.otlp_spans import Batch, Origin, OtlpSpan, is_run_span, trace_records
from otel_scorers.sidecar.trace_batches import decode_batch, encode_batch
from otel_scorers.sidecar.worker_pool import ProcessScoring
from otel_scorers.span_record import OWN_SCOPE
from tests.otlp_capture import OtlpCapture, attrs
from tests.sidecar_harness import (
    SCORERS,
    RunningSidecar,
    ServeProcess,
    agent_spans,
    encode,
    metrics_text,
    sample,
    send_grpc,
    sidecar_document,
)
from tests.waiting import wait_until


async def slow_check(run: AgentRun) -> float:
    await asyncio.sleep(1.0)
    return 1.0


@pytest.fixture
def capture() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


def scores(capture: OtlpCapture) -> set[tuple[bytes, str, float, str]]:
    found = set()
    for _, scope, span in capture.spans():
        if scope != OWN_SCOPE:
            continue
        values = attrs(span.attributes)
        found.add(
            (
                span.parent_span_id,
                values["gen_ai.evaluation.name"],
                values.get("gen_ai.evaluation.score.value", -1.0),
                values.get("gen_ai.evaluation.score.label", ""),
            )
        )
    return found


def test_the_scoring_process_gives_the_same_scores_as_scoring_in_process() -> None:
    body = encode(agent_spans(DEMO_RUNS)).SerializeToString()
    found = {}
    for in_process in (False, True):
        with OtlpCapture() as capture:
            document = sidecar_document(capture.endpoint, scoring_process=not in_process)
            with RunningSidecar(document) as sidecar:
                assert isinstance(sidecar.service.scoring, ProcessScoring) is not in_process
                send_grpc(sidecar.grpc_endpoint, body)
                assert capture.wait_for(lambda: len(scores(capture)) >= 18)
            found[in_process] = scores(capture)
    assert len(found[True]) == 18
    assert found[False] == found[True]


def test_metrics_endpoint_serves_both_processes_once_per_family(capture: OtlpCapture) -> None:
    with RunningSidecar(sidecar_document(capture.endpoint)) as sidecar:
        send_grpc(sidecar.grpc_endpoint, encode(agent_spans(DEMO_RUNS[:2])).SerializeToString())
        assert capture.wait_for(lambda: len(scores(capture)) >= 6)
        text = metrics_text(sidecar.http_url)
    assert sample(text, "otel_scorers_receiver_spans_total", otel_scorers_outcome="accepted") > 0  # receiving
    assert sample(text, "gen_ai_evaluation_results_total") == 6  # scoring
    assert sample(text, "otel_scorers_runs_total", otel_scorers_outcome="assembled") == 2
    help_lines = [line for line in text.splitlines() if line.startswith("# HELP ")]
    assert len(help_lines) == len(set(help_lines))


def test_two_scoring_processes_share_the_traces_and_score_each_once(capture: OtlpCapture) -> None:
    runs = DEMO_RUNS * 3  # 18 traces, sent one request each so that both processes get some
    with RunningSidecar(
        sidecar_document(capture.endpoint, scoring_processes=2, decision_wait_s=0.05)
    ) as sidecar:
        scoring = sidecar.service.scoring
        assert isinstance(scoring, ProcessScoring)
        pids = {child.process.pid for child in scoring._children if child is not None}
        assert len(pids) == 2
        for run in runs:
            send_grpc(sidecar.grpc_endpoint, encode(agent_spans([run])).SerializeToString())
        assert capture.wait_for(lambda: len(scores(capture)) >= 3 * len(runs), timeout_s=60)
        text = metrics_text(sidecar.http_url)
    evaluation_spans = [span for _, scope, span in capture.spans() if scope == OWN_SCOPE]
    assert len(evaluation_spans) == 3 * len(runs)  # one per run and scorer: none twice, none lost
    instances = {
        resource["service.instance.id"] for resource, scope, _ in capture.spans() if scope == OWN_SCOPE
    }
    assert len(instances) == 2  # both processes scored
    assert sample(text, "otel_scorers_runs_total", otel_scorers_outcome="assembled") == len(runs)
    scored = [span for span in evaluation_spans if "otel_scorers.skipped" not in attrs(span.attributes)]
    assert sample(text, "gen_ai_evaluation_results_total") == len(scored)  # both processes' counts


def test_merged_exposition_adds_up_the_same_series_and_keeps_the_others() -> None:
    ours = (
        b"# HELP runs_total Runs.\n# TYPE runs_total counter\n"
        b'runs_total{outcome="dropped"} 2.0\nruns_total{outcome="assembled"} 1.0\n'
    )
    theirs = (
        b"# HELP runs_total Runs.\n# TYPE runs_total counter\n"
        b'runs_total{outcome="assembled"} 5.0\n'
        b"# HELP depth Queue.\n# TYPE depth gauge\ndepth 3.0\n"
    )
    text = merge_prometheus_text(ours, theirs).decode()
    assert 'runs_total{outcome="dropped"} 2.0' in text
    assert 'runs_total{outcome="assembled"} 6.0' in text
    assert "depth 3.0" in text
    assert text.count("# TYPE runs_total counter") == 1


def test_a_killed_scoring_process_is_replaced_and_its_traces_are_counted(capture: OtlpCapture) -> None:
    slow = [{"type": "tests.sidecar.test_sidecar_worker:slow_check", "name": "slow"}]
    with RunningSidecar(sidecar_document(capture.endpoint, scorers=slow, decision_wait_s=0.05)) as sidecar:
        scoring = sidecar.service.scoring
        assert isinstance(scoring, ProcessScoring)
        first = scoring._children[0]
        assert first is not None
        send_grpc(sidecar.grpc_endpoint, encode(agent_spans(DEMO_RUNS[:1])).SerializeToString())
        wait_until(lambda: first.pending, 60, "the trace to reach the scoring process")
        os.kill(first.process.pid, signal.SIGKILL)

        def replaced() -> bool:
            child = scoring._children[0]
            return child is not None and child is not first and child.ready.is_set()

        wait_until(replaced, 30, "a new scoring process, ready")
        send_grpc(sidecar.grpc_endpoint, encode(agent_spans(DEMO_RUNS[1:2])).SerializeToString())
        assert capture.wait_for(lambda: len(scores(capture)) >= 1, timeout_s=60)
        text = metrics_text(sidecar.http_url)
    assert len(scores(capture)) == 1  # the second trace, scored by the new process
    dropped = {"otel_scorers_outcome": "dropped", "otel_scorers_reason": "worker_exited"}
    assert sample(text, "otel_scorers_runs_total", **dropped) == 1


def children_of(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.update(int(child) for child in text)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_the_scoring_process_exits_when_the_sidecar_is_killed(tmp_path: Path, capture: OtlpCapture) -> None:
    document: dict[str, Any] = sidecar_document(capture.endpoint)
    config = tmp_path / "sidecar.yaml"
    config.write_text(yaml.safe_dump(document))
    serve = ServeProcess(config)
    try:
        serve.grpc_port()
        workers = children_of(serve.process.pid)
        assert workers, "no scoring process"
        serve.process.kill()
        serve.process.wait(10)
        wait_until(lambda: not any(alive(pid) for pid in workers), 60, "the scoring process to exit")
    finally:
        serve.stop()


def test_scorers_config_reaches_the_scoring_process(capture: OtlpCapture) -> None:
    scorers = [*SCORERS, {"type": "tests.custom_scorers:polite", "name": "polite"}]
    with RunningSidecar(sidecar_document(capture.endpoint, scorers=scorers)) as sidecar:
        send_grpc(sidecar.grpc_endpoint, encode(agent_spans(DEMO_RUNS[:1])).SerializeToString())
        assert capture.wait_for(lambda: len(scores(capture)) >= 4)
    assert {name for _, name, _, _ in scores(capture)} == {
        "no_tool_errors",
        "called_tool",
        "says-sunny",
        "polite",
    }


def test_a_batch_hands_the_scoring_process_the_records_the_receiving_process_reads() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-service"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("example-agent")
    with (
        tracer.start_as_current_span("invoke_agent weather", attributes={"gen_ai.agent.name": "weather"}),
        tracer.start_as_current_span("execute_tool get_weather") as tool,
    ):
        tool.add_event("retry", {"attempt": 2})
        tool.set_status(Status(StatusCode.ERROR, "upstream timed out"))
    with tracer.start_as_current_span("GET /health"):  # a trace without a run span: every span goes
        pass
    provider.shutdown()
    request = encode([*exporter.get_finished_spans(), *agent_spans(DEMO_RUNS[:2])])
    traces: dict[bytes, BufferedTrace] = {}
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            origin = Origin(resource_spans.resource, scope_spans.scope, scope_spans.schema_url, Batch(0))
            for span in scope_spans.spans:
                trace = traces.setdefault(span.trace_id, BufferedTrace(span.trace_id, 0.0, 0.0))
                trace.spans.append(OtlpSpan(span, origin))
                if is_run_span(span):
                    trace.run_spans.append(trace.spans[-1])
    batch = [(job_id, trace) for job_id, trace in enumerate(traces.values(), start=7)]

    kind, jobs = pickle.loads(encode_batch(batch))
    received = decode_batch(jobs)

    assert kind == "jobs"
    assert received == [(job_id, trace_records(job_spans(trace))) for job_id, trace in batch]
    tool_record = next(
        record for _, records in received for record in records if record.name.startswith("execute_tool")
    )
    assert (tool_record.status, tool_record.status_message) == ("error", "upstream timed out")
    assert [(event.name, dict(event.attributes)) for event in tool_record.events] == [
        ("retry", {"attempt": 2})
    ]
    assert tool_record.resource["service.name"] == "weather-service"
    assert len(received) == 4  # the two agent runs, the run above and the health check
