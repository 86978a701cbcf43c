"""`otel-scorers judge-requests`: the requests the judge would be sent for a trace file, printed
and not sent (the judge server at the configured base URL hears nothing), the run's text masked
as `redact:` says, the API key never shown, and each request the very one `score` then sends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers.cli.main import main
from otel_scorers.runs.trace_writer import write_traces
from tests.judge_server import ALL_RELEVANT, MODEL, JudgeServer

KEY = "sk-test-0123456789abcdefghij"


def traces(path: Path) -> Path:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    for question in ("Write to ana@example.com about my order", "Is it sunny in Oslo?"):
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "helper",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": question}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "Done, see ana@example.com."}]}]
            ),
        }
        with provider.get_tracer("agent").start_as_current_span("invoke_agent helper", attributes=attributes):
            pass
    provider.shutdown()
    write_traces(path, exporter.get_finished_spans())
    return path


def test_the_requests_are_printed_redacted_and_not_sent(
    server: JudgeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "scorers.yaml"
    config.write_text(
        f"judge: {{model: {MODEL}, api_base: {server.url}, api_key: {KEY}, redact: true, timeout_s: 20}}\n"
        "scorers:\n  - type: answer_relevancy\n    args: {threshold: 0.5}\n  - type: no_tool_errors\n"
    )
    trace_file = traces(tmp_path / "traces.json")
    # in this process (litellm imported once for the session), as the command line runs it
    code = main(["judge-requests", "-c", str(config), str(trace_file)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert server.calls == 0  # nothing sent
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 2 and "2 judge requests for 2 runs, none sent" in err
    assert KEY not in out and {line["request"]["api_key"] for line in lines} == {"<api key>"}
    first = lines[0]["request"]
    text = json.dumps(first["messages"])
    assert "ana@example.com" not in text and "[EMAIL_1]" in text

    # `score` sends exactly these
    server.responder = lambda body: ALL_RELEVANT
    assert main(["score", "-c", str(config), str(trace_file)]) == 0, capsys.readouterr().err
    sent = sorted(
        (request.body for request in server.requests), key=lambda body: json.dumps(body["messages"])
    )
    shown = sorted((line["request"] for line in lines), key=lambda request: json.dumps(request["messages"]))
    assert len(sent) == 2
    for body, request in zip(sent, shown, strict=True):
        assert body["messages"] == request["messages"]
        assert body["response_format"] == request["response_format"]
        assert body["max_tokens"] == request["max_tokens"]
        assert body["model"] == request["model"].removeprefix("openai/")
