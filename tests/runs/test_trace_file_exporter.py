"""`TraceFileExporter`: an agent's own spans, through the SDK's batch processor, written as the
trace file `score` reads: the run comes back whole (input, answer, tool call with its arguments
and result), a trace exported in two batches is still one run, and `score` scores it."""

from __future__ import annotations

import json
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult

from otel_scorers import TraceFileExporter
from otel_scorers.runs.otlp_files import runs_from_files
from tests.cli.test_score_gate import ROOT, run_cli


def text(role: str, content: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": content}]}])


def test_the_agent_s_spans_are_a_trace_file_score_reads(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    provider = TracerProvider()
    processor = BatchSpanProcessor(TraceFileExporter(path))
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("my-agent")
    run_attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "weather-agent",
        "gen_ai.input.messages": text("user", "Weather in Paris?"),
        "gen_ai.output.messages": text("assistant", "Sunny, 21°C."),
    }
    with tracer.start_as_current_span("invoke_agent weather-agent", attributes=run_attributes):
        tool = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.id": "call_1",
            "gen_ai.tool.call.arguments": json.dumps({"city": "Paris"}),
            "gen_ai.tool.call.result": "Sunny, 21°C",
        }
        with tracer.start_as_current_span("execute_tool get_weather", attributes=tool):
            pass
        processor.force_flush()  # the tool span in one batch, the run span in the next
    provider.shutdown()
    assert len(path.read_bytes().splitlines()) == 2

    (run,) = runs_from_files([path], [])
    assert (run.agent_name, run.input, run.output) == ("weather-agent", "Weather in Paris?", "Sunny, 21°C.")
    (call,) = run.tool_calls
    assert (call.name, call.arguments, call.result) == ("get_weather", {"city": "Paris"}, "Sunny, 21°C")

    result = run_cli("score", str(path), "-c", str(ROOT / "examples" / "scorers.yaml"))
    assert result.returncode == 0, result.stderr
    assert {json.loads(line)["scorer"] for line in result.stdout.splitlines()} == {
        "no_tool_errors", "called_tool", "max_tool_calls", "gives-temperature",
    }  # fmt: skip


def test_a_write_that_fails_is_a_failed_export_not_an_exception(tmp_path: Path) -> None:
    exporter = TraceFileExporter(tmp_path / "missing-directory" / "traces.jsonl")
    provider = TracerProvider()
    tracer = provider.get_tracer("agent")
    with tracer.start_as_current_span("invoke_agent x") as span:
        pass
    assert exporter.export([span]) is SpanExportResult.FAILURE  # type: ignore[list-item]
