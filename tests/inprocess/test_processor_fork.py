"""The processor under a forking server (gunicorn, uvicorn workers): a child forked at any moment
scores with its own engine, and starting that engine never makes an agent's thread wait."""

from __future__ import annotations

import os
import select
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence

import pytest
from opentelemetry._logs import NoOpLoggerProvider
from opentelemetry.metrics import NoOpMeterProvider
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from otel_scorers import AgentRun, ScoringSpanProcessor, bind, checks, scorer
from otel_scorers.demos.example_agent import ExampleAgent, ScriptedRun
from otel_scorers.span_record import OWN_SCOPE

from ..conftest import Telemetry

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

PARIS = ScriptedRun(
    "What's the weather in Paris?", [("get_weather", {"city": "Paris"})], "Sunny, 21°C in Paris."
)
ATLANTIS = ScriptedRun("Weather in Atlantis?", [("get_weather", {"city": "Atlantis"})], "Sorry, no idea.")
FORKS = 60
#: A child still running after this long is deadlocked: a deadlock never ends, and a child's
#: run and flush take a fraction of a second, several times that when the machine is busy.
CHILD_DEADLINE_S = 30.0
MAX_CHILDREN = 8


class ListExporter(SpanExporter):
    """Keeps spans in a list: no lock of its own, so only the processor's locks are on trial."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS


@scorer
def answered(run: AgentRun) -> bool:  # sync: runs on its own worker threads
    return bool(run.output)


def scored_processor() -> tuple[TracerProvider, ScoringSpanProcessor, ListExporter]:
    """Hold mode with a rate-limited binding: every lock the processor owns is taken per run.
    No-op meter and logger providers: the SDK's own metric locks are not the processor's."""
    exporter = ListExporter()
    provider = TracerProvider()
    processor = ScoringSpanProcessor(
        [bind(checks.no_tool_errors(), max_per_minute=1_000_000), answered],
        downstream=SimpleSpanProcessor(exporter),
        tracer_provider=provider,
        meter_provider=NoOpMeterProvider(),
        logger_provider=NoOpLoggerProvider(),
    )
    provider.add_span_processor(processor)
    return provider, processor, exporter


def in_forked_child(work: Callable[[], str]) -> tuple[int, str]:
    """Run `work` in a forked child (a gunicorn worker, say): its exit code and what it returned."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.write(write_end, work().encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    _, status = os.waitpid(pid, 0)
    report = os.read(read_end, 1000).decode()
    os.close(read_end)
    return os.waitstatus_to_exitcode(status), report


@pytest.fixture
def busy_agents() -> Iterator[tuple[ScoringSpanProcessor, ExampleAgent, ListExporter]]:
    """Two agent threads ending runs back to back, as a busy server's do, with their scoring."""
    provider, processor, exporter = scored_processor()
    agent = ExampleAgent(tracer=provider.get_tracer("agent"))
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            agent.run(PARIS)
            del exporter.spans[:]  # bounded memory over many runs

    threads = [threading.Thread(target=serve, daemon=True) for _ in range(2)]
    for thread in threads:
        thread.start()
    try:
        yield processor, agent, exporter
    finally:
        stop.set()
        for thread in threads:
            thread.join(5)
        processor.shutdown(5)


def scored_run_in_child(processor: ScoringSpanProcessor, agent: ExampleAgent, exporter: ListExporter) -> int:
    """In the child: one run, scored, its run span exported with its score. The exit code."""
    del exporter.spans[:]
    agent.run(PARIS)
    if not processor.force_flush(20_000):
        return 2
    run_scores = [
        (
            span.attributes.get("otel_scorers.score.no_tool_errors"),
            span.attributes.get("otel_scorers.score.answered"),
        )
        for span in exporter.spans
        if (span.attributes or {}).get("gen_ai.operation.name") == "invoke_agent"
    ]
    return 0 if run_scores == [(1.0, 1.0)] else 3


def test_children_forked_while_agent_threads_hold_the_processors_locks_never_deadlock(
    busy_agents: tuple[ScoringSpanProcessor, ExampleAgent, ListExporter],
) -> None:
    processor, agent, exporter = busy_agents
    outcomes: dict[str, int] = {}
    running: dict[int, tuple[int, float]] = {}  # pid -> (its pidfd, its deadline)

    def reap() -> None:
        """Wait for a child to exit or the nearest deadline to pass, then count the children that
        are over: one still running past its deadline is deadlocked."""
        nearest = min(deadline for _, deadline in running.values())
        select.select([pidfd for pidfd, _ in running.values()], [], [], max(0.0, nearest - time.monotonic()))
        for pid, (pidfd, deadline) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                outcome = f"exit {os.waitstatus_to_exitcode(status)}"
            elif time.monotonic() >= deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                outcome = "deadlocked"
            else:
                continue
            os.close(pidfd)
            del running[pid]
            outcomes[outcome] = outcomes.get(outcome, 0) + 1

    for _ in range(FORKS):
        time.sleep(0.002)  # a different moment of the agents' work each time
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = scored_run_in_child(processor, agent, exporter)
            finally:
                os._exit(code)
        running[pid] = (os.pidfd_open(pid), time.monotonic() + CHILD_DEADLINE_S)
        while len(running) >= MAX_CHILDREN:
            reap()
    while running:
        reap()
    assert outcomes == {"exit 0": FORKS}


def engine_threads() -> int:
    return sum(1 for thread in threading.enumerate() if thread.name == "otel-scorers" and thread.is_alive())


def test_the_engine_runs_before_the_first_span_in_the_parent_and_in_a_forked_child() -> None:
    """So no agent thread ever starts the engine's thread or waits for it to start."""
    before = engine_threads()
    provider, processor, _ = scored_processor()
    agent = ExampleAgent(tracer=provider.get_tracer("agent"))
    try:
        in_parent = engine_threads()

        def first_run() -> str:
            in_child = engine_threads()  # before any span: only threads the fork hook started
            agent.run(PARIS)
            return f"{in_child} {processor.force_flush(20_000)}"

        exit_code, report = in_forked_child(first_run)
    finally:
        processor.shutdown(5)
    in_child_text, child_scored = report.split()
    assert exit_code == 0 and child_scored == "True"
    assert in_parent == before + 1, "the processor's engine thread runs once the processor is built"
    assert int(in_child_text) == in_parent, "each engine running in the parent runs in the child at once"


def test_a_forked_child_scores_with_its_own_engine(telemetry: Telemetry) -> None:
    processor = ScoringSpanProcessor([checks.no_tool_errors()], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    telemetry.export_spans_directly()
    weather = ExampleAgent(tracer=telemetry.tracer_provider.get_tracer("example-agent"))
    weather.run(PARIS)  # the parent's engine thread is running when the worker forks
    processor.force_flush(5000)

    def atlantis() -> str:
        telemetry.spans.clear()
        weather.run(ATLANTIS)
        flushed = processor.force_flush(5000)
        return f"{flushed} {[s.attributes['gen_ai.evaluation.score.value'] for s in evaluations(telemetry)]}"

    exit_code, report = in_forked_child(atlantis)
    assert exit_code == 0
    assert report == "True [0.0]", "the child scored its own run on its own engine thread"
    weather.run(PARIS)
    assert processor.force_flush(5000), "the parent's engine is unaffected"
    assert len(evaluations(telemetry)) == 2


def evaluations(telemetry: Telemetry) -> list[ReadableSpan]:
    return [s for s in telemetry.finished_spans() if s.instrumentation_scope.name == OWN_SCOPE]
