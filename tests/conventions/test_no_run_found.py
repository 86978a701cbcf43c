"""Never silent: a trace in which no reader finds a run is explained (`runs --explain`), counted
by the scope of its root span (`otel_scorers.traces.no_run`) and said once per scope, by the
processor and by the sidecar."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers import ScoringSpanProcessor, checks, conventions
from otel_scorers.cli.main import main
from otel_scorers.config import parse_config
from otel_scorers.demos.example_agent import ExampleAgent, ScriptedRun
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.runs.no_run import OTHER, RunlessTraces
from otel_scorers.runs.trace_writer import write_traces
from otel_scorers.sidecar.batch_assembler import BatchAssembler, Limits
from tests.sidecar.test_sidecar_assembly import SETTINGS, Clock, commit, counter_total

from ..conftest import Telemetry
from .acme_instrumentation import CONFIG, SCOPE, Acme, acme_trace

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"
METRIC = "otel_scorers.traces.no_run"


@pytest.fixture(autouse=True)
def no_descriptions_after() -> Iterator[None]:
    yield
    conventions.use_descriptions(())


def explain(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str]:
    code = main(["runs", "--explain", *arguments])
    return code, capsys.readouterr().out


def test_explain_says_no_reader_knows_an_unknown_instrumentation_and_how_to_describe_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace_file = tmp_path / "acme.jsonl"
    write_traces(trace_file, acme_trace())
    code, out = explain(capsys, str(trace_file))
    assert code == 0
    assert f"5 spans; scopes: {SCOPE} (5)" in out
    assert out.count("]: no reader") == 5
    assert f"no run found: no reader knows these spans (scopes: {SCOPE})" in out
    assert "conventions: section" in out and "otel-scorers runs -c CONFIG --explain FILE" in out

    config_file = tmp_path / "config.yaml"
    config_file.write_text(CONFIG)
    code, out = explain(capsys, "-c", str(config_file), str(trace_file))
    assert "no run found" not in out
    assert "'agent forecaster' [acme.agents]: acme, run" in out
    assert '      read   acme.request = {"text": "Weather in Paris?", "lang": "en"}' in out
    assert "'tool:get_alerts' [acme.agents]: acme, tool" in out
    assert "      read   event acme.failure: reason = alerts service down" in out
    assert "run forecaster (span " in out and "2 tool calls; nothing missing" in out


def test_explain_shows_what_a_shipped_reader_read_and_what_was_absent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = explain(capsys, str(TRACES / "langfuse" / "failing_tool.json"))
    assert code == 0
    assert "'weather_agent' [langfuse-sdk]: langfuse, run" in out
    # The run was not in a session (nor is its agent a Haystack one, which the reader asks too).
    assert "      absent langfuse.observation.metadata.haystack.agent.max_steps, session.id" in out
    assert "      read   langfuse.observation.status_message = weather service unavailable" in out
    assert "run weather_agent (span" in out and "1 tool call; nothing missing" in out


def test_explain_says_when_spans_have_roles_but_none_is_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    Acme(provider).tool("get_weather", "c1", {"city": "Paris"}, "sunny")  # a tool, no agent around it
    trace_file = tmp_path / "tool.jsonl"
    write_traces(trace_file, exporter.get_finished_spans())
    config_file = tmp_path / "config.yaml"
    config_file.write_text(CONFIG)
    _, out = explain(capsys, "-c", str(config_file), str(trace_file))
    assert "no run found: readers took spans as 1 tool, but none as an agent run" in out


def test_explain_shows_control_characters_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("evil\x1b[2Jscope").start_as_current_span("x"):
        pass
    trace_file = tmp_path / "evil.jsonl"
    write_traces(trace_file, exporter.get_finished_spans())
    _, out = explain(capsys, str(trace_file))
    assert "\x1b" not in out and "evil\\x1b[2Jscope" in out


def agent_run(provider: TracerProvider) -> None:
    ExampleAgent(tracer=provider.get_tracer("example-agent")).run(
        ScriptedRun("What's the weather in Paris?", [("get_weather", {"city": "Paris"})], "Sunny.")
    )


def test_the_processor_counts_traces_without_a_run_by_root_scope_and_says_so_once(
    telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    processor = ScoringSpanProcessor([checks.no_tool_errors()], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    acme = Acme(telemetry.tracer_provider)
    with caplog.at_level(logging.WARNING, logger="otel_scorers"):
        for _ in range(3):
            acme.agent("forecaster", "Weather?", "Sunny.", "t", [acme.llm])
        agent_run(telemetry.tracer_provider)  # a run a reader knows: not counted
        assert processor.force_flush(5000)
    assert telemetry.counter(METRIC, otel_scorers__scope=SCOPE) == 3
    assert telemetry.counter(METRIC) == 3
    said = [record.getMessage() for record in caplog.records if "held no agent run" in record.getMessage()]
    assert len(said) == 1
    assert repr(SCOPE) in said[0] and "runs --explain" in said[0] and "conventions:" in said[0]
    processor.shutdown()


def test_roots_past_max_traces_between_two_counts_are_said_to_be_missed(
    telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    processor = ScoringSpanProcessor([checks.no_tool_errors()], max_traces=4, **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    web = telemetry.tracer_provider.get_tracer("web")
    with caplog.at_level(logging.WARNING, logger="otel_scorers"):
        for _ in range(50):
            with web.start_as_current_span("handler"):
                pass
        assert processor.force_flush(5000)
    assert 4 <= telemetry.counter(METRIC, otel_scorers__scope="web") < 50
    said = [record.getMessage() for record in caplog.records if "were not counted" in record.getMessage()]
    assert len(said) == 1 and "lower bound" in said[0]
    processor.shutdown()


def test_roots_of_interleaved_tracers_are_counted_under_each_scope_name(telemetry: Telemetry) -> None:
    # Two tracers of the same scope name are two scope objects: their traces add up by name.
    processor = ScoringSpanProcessor([checks.no_tool_errors()], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    web, worker, web_again = (telemetry.tracer_provider.get_tracer(name) for name in ("web", "worker", "web"))
    for tracer in (web, worker, web, web, worker, web_again, web):
        with tracer.start_as_current_span("handler"), tracer.start_as_current_span("query"):
            pass
    assert processor.force_flush(5000)
    assert telemetry.counter(METRIC, otel_scorers__scope="web") == 5
    assert telemetry.counter(METRIC, otel_scorers__scope="worker") == 2
    processor.shutdown()


def test_a_described_instrumentation_is_not_counted(telemetry: Telemetry) -> None:
    config = parse_config(yaml.safe_load(CONFIG))
    processor = ScoringSpanProcessor(
        [checks.no_tool_errors()], conventions=config.conventions, **telemetry.providers()
    )
    telemetry.tracer_provider.add_span_processor(processor)
    acme = Acme(telemetry.tracer_provider)
    acme.agent("forecaster", "Weather?", "Sunny.", "t", [acme.llm])
    assert processor.force_flush(5000)
    assert telemetry.counter(METRIC) == 0
    assert telemetry.counter("otel_scorers.evaluations", otel_scorers__outcome="scored") == 1
    processor.shutdown()


def test_a_trace_whose_run_like_span_gives_no_run_is_counted(telemetry: Telemetry) -> None:
    # A Langfuse trace opens a buffer by its scope (its run may be labelled later), yet this
    # one has no agent observation: built, it gives no run.
    processor = ScoringSpanProcessor([checks.no_tool_errors()], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    tracer = telemetry.tracer_provider.get_tracer("langfuse-sdk")
    with tracer.start_as_current_span("handler", attributes={"langfuse.observation.type": "span"}):
        pass
    assert processor.force_flush(5000)
    assert telemetry.counter(METRIC, otel_scorers__scope="langfuse-sdk") == 1
    processor.shutdown()


def test_scopes_past_the_bound_are_counted_as_other_and_said_no_more(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reader = InMemoryMetricReader()
    tally = RunlessTraces(PipelineMetrics(MeterProvider(metric_readers=[reader])), max_scopes=2)
    with caplog.at_level(logging.WARNING, logger="otel_scorers"):
        for scope in ("a", "b", "c", "d", "a", None):
            tally.add(scope)
    assert counter_total(reader, METRIC, **{"otel_scorers.scope": "a"}) == 2
    assert counter_total(reader, METRIC, **{"otel_scorers.scope": "b"}) == 1
    assert counter_total(reader, METRIC, **{"otel_scorers.scope": OTHER}) == 3
    assert len([r for r in caplog.records if "held no agent run" in r.getMessage()]) == 2


def test_the_sidecar_counts_a_trace_let_go_without_a_run_span() -> None:
    reader = InMemoryMetricReader()
    metrics = PipelineMetrics(MeterProvider(metric_readers=[reader]))
    clock = Clock()
    built = BatchAssembler(
        metrics,
        Limits(SETTINGS.max_traces, SETTINGS.max_spans, SETTINGS.max_bytes),
        decision_wait_s=2.0,
        max_wait_s=10.0,
        late_memory=100,
        clock=clock,
        runless=RunlessTraces(metrics),
    )
    commit(built, acme_trace())
    clock.now += 10.5
    built.poll()
    assert built.take_ready() is None
    assert counter_total(reader, METRIC, **{"otel_scorers.scope": SCOPE}) == 1
