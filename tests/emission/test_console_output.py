"""The console output: one line per score, from the in-process processor and from `serve`, so
that scores can be seen on a machine without a collector. The runs are the example agent's
scripts, which say what each run did (Atlantis: the weather tool fails)."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import yaml
from opentelemetry.sdk.trace import TracerProvider

from otel_scorers import ScoringSpanProcessor, checks
from otel_scorers.config import parse_config
from otel_scorers.demos.example_agent import DEMO_RUNS, ExampleAgent
from otel_scorers.sidecar import Sidecar, with_console

from ..sidecar_harness import agent_spans, encode, send_grpc

ATLANTIS = DEMO_RUNS[2]
assert "Atlantis" in ATLANTIS.question


class ThreadNoting(io.StringIO):
    """A stream that notes which thread wrote to it."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[str] = set()

    def write(self, text: str) -> int:
        self.threads.add(threading.current_thread().name)
        return super().write(text)


def test_the_processor_prints_a_line_per_score_from_the_scoring_thread() -> None:
    out = ThreadNoting()
    provider = TracerProvider()
    scoring = ScoringSpanProcessor(
        scorers=[checks.no_tool_errors(), checks.called_tool("get_weather")], console=out
    )
    provider.add_span_processor(scoring)
    agent = ExampleAgent(tracer=provider.get_tracer("agent"))
    with provider.get_tracer("test").start_as_current_span("request") as outer:
        trace_id = f"{outer.get_span_context().trace_id:032x}"
        agent.run(ATLANTIS)
    assert scoring.force_flush()
    scoring.shutdown()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"score trace={trace_id} run=")
    assert " agent=weather-agent scorer=no_tool_errors value=0 label=fail reason=" in lines[0]
    assert "Atlantis" in lines[0], "the reason names what failed"
    assert " scorer=called_tool value=1 label=pass " in lines[1]
    assert out.threads == {"otel-scorers"}, "written on the scoring thread, never the agent's"


def test_processor_console_from_the_config_file_prints_to_standard_output(capsys) -> None:  # type: ignore[no-untyped-def]
    config = parse_config({"scorers": [{"type": "no_tool_errors"}], "processor": {"console": True}})
    provider = TracerProvider()
    scoring = ScoringSpanProcessor.from_config(config)
    provider.add_span_processor(scoring)
    ExampleAgent(tracer=provider.get_tracer("agent")).run(DEMO_RUNS[0])
    assert scoring.force_flush()
    scoring.shutdown()
    (line,) = capsys.readouterr().out.splitlines()
    assert " scorer=no_tool_errors value=1 label=pass " in line


def _without_otlp_settings() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if not key.startswith("OTEL_EXPORTER_OTLP")}


def test_serve_console_prints_each_score_and_sends_nothing_when_no_endpoint_is_set(tmp_path: Path) -> None:
    config = tmp_path / "sidecar.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "scorers": [
                    {"type": "no_tool_errors"},
                    {"type": "called_tool", "args": {"tool": "get_weather"}},
                ],
                "sidecar": {
                    "grpc": {"port": 0},
                    "http": {"port": 0},
                    "decision_wait_s": 0.2,
                    "max_wait_s": 2,
                },
            }
        )
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "otel_scorers.cli", "serve", "-c", str(config), "--console"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**_without_otlp_settings(), "PYTHONUNBUFFERED": "1"},
    )
    errors: list[str] = []
    ready = threading.Event()

    def read_stderr() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            errors.append(line)
            if "scores go to" in line:
                ready.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        assert ready.wait(120), "".join(errors)  # a guard against a hang: a start takes seconds
        port = next(int(line.rsplit(":", 1)[1]) for line in errors if "OTLP/gRPC receiver on" in line)
        spans = agent_spans(DEMO_RUNS[:3])
        send_grpc(f"127.0.0.1:{port}", encode(spans).SerializeToString())
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(6)]  # 3 runs x 2 scorers
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(20)
        reader.join(5)
    traces = {f"{span.context.trace_id:032x}" for span in spans}
    assert all(line.startswith("score trace=") for line in lines), lines
    assert {line.split()[1].removeprefix("trace=") for line in lines} == traces
    failed = [line for line in lines if "label=fail" in line]
    assert len(failed) == 1 and "scorer=no_tool_errors value=0" in failed[0] and "Atlantis" in failed[0]
    log = "".join(errors)
    assert "scores go to standard output, one line each\n" in log
    assert "Failed to export" not in log and "could not send" not in log


def test_serve_says_where_scores_go(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for variable in (
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ):
        monkeypatch.delenv(variable, raising=False)

    def destinations(document: dict[str, object]) -> str:
        async def made_in_a_loop() -> str:  # the sidecar's gRPC server belongs to a running loop
            sidecar = Sidecar(parse_config({"scorers": [{"type": "no_tool_errors"}], **document}))
            try:
                return sidecar.destinations()
            finally:
                sidecar.telemetry.shutdown(0.5)

        return asyncio.run(made_in_a_loop())

    assert destinations({}) == (
        "OTLP (grpc) at http://localhost:4317, the SDK's default: neither sidecar.export.endpoint nor "
        "OTEL_EXPORTER_OTLP_ENDPOINT is set (serve --console prints each score here instead)"
    )
    named = {"sidecar": {"export": {"endpoint": "http://collector:4317"}, "console": True}}
    assert destinations(named) == "standard output, one line each, and OTLP (grpc) at http://collector:4317"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel:4317")
    assert destinations({}) == "OTLP (grpc) at http://otel:4317 (from OTEL_EXPORTER_OTLP_ENDPOINT)"
    kept = with_console(parse_config({"scorers": [{"type": "no_tool_errors"}]}))
    assert kept.sidecar.console and kept.sidecar.export.enabled, "an endpoint from the environment is kept"


def test_what_shutdown_could_not_send_names_the_endpoint_even_when_it_is_the_default(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from otel_scorers.config import ExportConfig
    from otel_scorers.otlp.telemetry import build_telemetry

    for variable in (
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ):
        monkeypatch.delenv(variable, raising=False)
    for protocol, default in (("grpc", "http://localhost:4317"), ("http/protobuf", "http://localhost:4318")):
        telemetry = build_telemetry(ExportConfig(protocol=protocol))  # type: ignore[arg-type]
        try:
            assert telemetry.endpoint == default
        finally:
            telemetry.shutdown(0.2)
