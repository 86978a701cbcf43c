"""End to end with the real programs on loopback: the example agent (its own process) sends OTLP
to the real Collector running a shipped config; the Collector feeds the sidecar (`otel-scorers
serve`, tap and inline); the scores come back through the Collector to a real Jaeger; and the
failing runs are found through Jaeger's HTTP API by the searches docs/deploy.md gives."""

from __future__ import annotations

import logging
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.collector.programs import ROOT, Collector, Jaeger, loopback, on_loopback, shipped, span_tags
from tests.sidecar_harness import ServeProcess
from tests.waiting import wait_until

pytestmark = pytest.mark.collector

DEPLOY_DOC = (ROOT / "docs" / "deploy.md").read_text()
#: The example agent's service, and the runs of one round of its demo questions.
AGENT_SERVICE = "weather-service"
ROUND = 6


@pytest.fixture
def jaeger(tmp_path: Path) -> Iterator[Jaeger]:
    running = Jaeger(tmp_path)
    try:
        yield running
    finally:
        running.stop()


def tap_search() -> dict[str, str]:
    """The tags docs/deploy.md gives for the failing evaluations of tap mode."""
    match = re.search(r"`gen_ai\.evaluation\.name=(\S+) gen_ai\.evaluation\.score\.label=fail`", DEPLOY_DOC)
    assert match, "docs/deploy.md gives no tap-mode search"
    return {"gen_ai.evaluation.name": match.group(1), "gen_ai.evaluation.score.label": "fail"}


def inline_search() -> dict[str, str]:
    match = re.search(r"tag `(otel_scorers\.label\.\S+)=fail`", DEPLOY_DOC)
    assert match, "docs/deploy.md gives no inline-mode search"
    return {match.group(1): "fail"}


def sidecar_config(tmp_path: Path, shipped_file: str, export_to: str, **overrides: Any) -> Path:
    """A shipped sidecar config (deploy/), its addresses on loopback."""
    document: dict[str, Any] = yaml.safe_load((ROOT / "deploy" / shipped_file).read_text())
    sidecar = document["sidecar"]
    sidecar["grpc"] = {"host": "127.0.0.1", "port": 0}
    sidecar["http"] = {"host": "127.0.0.1", "port": 0}
    sidecar["export"].update(
        {"endpoint": f"http://{export_to}", "batch_delay_s": 0.1, "metric_interval_s": 1}
    )
    sidecar.update(overrides)
    path = tmp_path / "otel-scorers.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def example_traffic(endpoint: str, rounds: int = 1) -> None:
    """The bundled example agent, as docs/deploy.md runs it, in its own process."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "otel_scorers.demos.example_traffic",
            "--endpoint",
            f"http://{endpoint}",
            "--rounds",
            str(rounds),
            "--interval",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr


def spans_by_id(trace: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {span["spanID"]: span for span in trace["spans"]}


def parent_of(span: dict[str, Any], trace: dict[str, Any]) -> dict[str, Any] | None:
    parents = [ref["spanID"] for ref in span.get("references", []) if ref["refType"] == "CHILD_OF"]
    return spans_by_id(trace).get(parents[0]) if parents else None


def service_of(span: dict[str, Any], trace: dict[str, Any]) -> str:
    name: str = trace["processes"][span["processID"]]["serviceName"]
    return name


def test_tap_mode_failing_runs_are_found_in_jaeger_by_the_search_the_docs_give(
    tmp_path: Path, jaeger: Jaeger
) -> None:
    agent_in, scores_in = loopback(), loopback()
    serve = ServeProcess(sidecar_config(tmp_path, "otel-scorers.yaml", scores_in))
    collector = None
    try:
        sidecar_at = f"127.0.0.1:{serve.grpc_port(90)}"
        config = on_loopback(
            shipped("sidecar-tap.yaml"),
            {
                "otlp.grpc": agent_in,
                "otlp/scores.grpc": scores_in,
                "otlp/jaeger": jaeger.otlp_grpc,
                "otlp/otel-scorers": sidecar_at,
            },
        )
        collector = Collector(config, tmp_path)
        example_traffic(agent_in)
        search = tap_search()

        def failing() -> list[dict[str, Any]]:
            return jaeger.traces("otel-scorers", search)

        wait_until(
            failing, 90, lambda: f"a trace for {search}: {''.join(serve.lines)}{collector_output(collector)}"
        )
        # Every run of the round reached Jaeger with its own spans, each evaluated under its run.
        wait_until(lambda: len(evaluated_runs(jaeger)) == ROUND, 60, lambda: f"{evaluated_runs(jaeger)}")
        found = failing()
    finally:
        if collector is not None:
            collector.stop()
        serve.stop()
    (trace,) = found  # the Atlantis run, whose weather tool fails
    hits = [
        span
        for span in trace["spans"]
        if span["operationName"] == f"evaluate {search['gen_ai.evaluation.name']}"
        and span_tags(span).get("gen_ai.evaluation.score.label") == "fail"
    ]
    (hit,) = hits
    assert service_of(hit, trace) == "otel-scorers"
    run = parent_of(hit, trace)
    assert run is not None and run["operationName"].startswith("invoke_agent")
    assert service_of(run, trace) == AGENT_SERVICE
    assert "Atlantis" in str(span_tags(run).get("gen_ai.input.messages", ""))
    assert span_tags(hit)["gen_ai.evaluation.explanation"]  # why it failed


def evaluated_runs(jaeger: Jaeger) -> dict[str, int]:
    """The agent's runs in Jaeger, by run span id, with the evaluation spans under each."""
    runs: dict[str, int] = {}
    for trace in jaeger.traces(AGENT_SERVICE, {}):
        for span in trace["spans"]:
            if span["operationName"].startswith("invoke_agent"):
                runs.setdefault(span["spanID"], 0)
        for span in trace["spans"]:
            parent = parent_of(span, trace)
            if span["operationName"].startswith("evaluate ") and parent is not None:
                assert parent["operationName"].startswith("invoke_agent")
                runs[parent["spanID"]] = runs.get(parent["spanID"], 0) + 1
    return {run: count for run, count in runs.items() if count}


def collector_output(collector: Collector | None) -> str:
    return collector.output()[-3000:] if collector is not None else ""


def test_inline_mode_failing_runs_are_found_in_jaeger_by_the_tag_the_docs_give(
    tmp_path: Path, jaeger: Jaeger
) -> None:
    agent_in, scored_in = loopback(), loopback()
    path = sidecar_config(tmp_path, "otel-scorers-inline.yaml", scored_in)
    document = yaml.safe_load(path.read_text())
    document["sidecar"]["forward"]["endpoint"] = f"http://{scored_in}"
    path.write_text(yaml.safe_dump(document))
    serve = ServeProcess(path)
    collector = None
    try:
        sidecar_at = f"127.0.0.1:{serve.grpc_port(90)}"
        config = on_loopback(
            shipped("sidecar-inline.yaml"),
            {
                "otlp.grpc": agent_in,
                "otlp/scored.grpc": scored_in,
                "otlp/jaeger": jaeger.otlp_grpc,
                "otlp/otel-scorers": sidecar_at,
            },
        )
        collector = Collector(config, tmp_path)
        example_traffic(agent_in)
        search = inline_search()

        def failing() -> list[dict[str, Any]]:
            return jaeger.traces(AGENT_SERVICE, search)

        wait_until(
            failing, 90, lambda: f"a trace for {search}: {''.join(serve.lines)}{collector_output(collector)}"
        )
        found = failing()
        # Every span went through the sidecar to Jaeger: the agent's whole round is there.
        wait_until(
            lambda: len(run_spans(jaeger)) == ROUND, 60, lambda: f"{ROUND} run spans: {run_spans(jaeger)}"
        )
        runs = run_spans(jaeger)
    finally:
        if collector is not None:
            collector.stop()
        serve.stop()
    (trace,) = found
    (key,) = search
    (run,) = [span for span in trace["spans"] if span_tags(span).get(key) == "fail"]
    assert run["operationName"].startswith("invoke_agent")
    assert "Atlantis" in str(span_tags(run).get("gen_ai.input.messages", ""))
    assert span_tags(run)[key.replace(".label.", ".score.")] == 0
    assert all(key in tags for tags in runs)  # every run held, scored, labelled and forwarded


def run_spans(jaeger: Jaeger) -> list[dict[str, Any]]:
    return [
        span_tags(span)
        for trace in jaeger.traces(AGENT_SERVICE, {})
        for span in trace["spans"]
        if span["operationName"].startswith("invoke_agent")
    ]


def test_a_sidecar_pointed_straight_at_jaeger_says_in_one_line_that_it_takes_no_logs_or_metrics(
    tmp_path: Path, jaeger: Jaeger
) -> None:
    """As a new user would: `sidecar.export.endpoint` at Jaeger's OTLP port, example traffic
    straight into the sidecar. The evaluation spans reach Jaeger; the log says one thing."""
    path = sidecar_config(tmp_path, "otel-scorers.yaml", jaeger.otlp_grpc)
    serve = ServeProcess(path)
    try:
        example_traffic(f"127.0.0.1:{serve.grpc_port(90)}")
        wait_until(
            lambda: jaeger.traces("otel-scorers", tap_search()),
            90,
            lambda: f"scores in Jaeger: {''.join(serve.lines)}",
        )
        serve.process.send_signal(signal.SIGTERM)
        assert serve.process.wait(30) == 0
    finally:
        serve.stop()
    said = [line for line in serve.lines if " WARNING " in line or " ERROR " in line or "Traceback" in line]
    (line,) = said
    assert (
        f"the OTLP endpoint http://{jaeger.otlp_grpc} does not take logs or metrics (gRPC UNIMPLEMENTED)"
        in line
    )
    assert "sidecar.export.logs: false and sidecar.export.metrics: false" in line


def test_the_processor_pointed_straight_at_jaeger_says_in_one_line_that_it_takes_no_logs(
    jaeger: Jaeger, caplog: pytest.LogCaptureFixture
) -> None:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    from otel_scorers import ScoringSpanProcessor, checks
    from otel_scorers.otlp.score_export import OtlpScoreExport

    caplog.set_level(logging.WARNING)
    provider = TracerProvider(resource=Resource.create({"service.name": "in-process-agent"}))
    export = OtlpScoreExport(f"http://{jaeger.otlp_grpc}", max_export_batch_size=1)
    processor = ScoringSpanProcessor(
        [checks.no_tool_errors(), checks.includes("sunny")],
        tracer_provider=provider,
        meter_provider=MeterProvider(),
        export=export,
    )
    provider.add_span_processor(processor)
    for _ in range(3):
        with provider.get_tracer("agent").start_as_current_span(
            "invoke_agent weather",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather"},
        ):
            pass
    processor.force_flush(10_000)
    processor.shutdown(10.0)
    assert export.refused() == 6 and export.unsent() == (0, 0)
    (line,) = [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
    assert "does not take logs (gRPC UNIMPLEMENTED)" in line and "OTEL_LOGS_EXPORTER=none" in line
    wait_until(lambda: jaeger.traces("in-process-agent", {"gen_ai.evaluation.name": "no_tool_errors"}), 30)
