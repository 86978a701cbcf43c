"""No terminal control reaches a terminal: what the command line, the console output and the
sidecar's log show of input (file keys, scorer names, trace text) has every control and
bidirectional formatting character escaped, the escape readable as `\\uXXXX`."""

from __future__ import annotations

import io
import json
import logging
import re
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

from otel_scorers import ScoringSpanProcessor, checks
from otel_scorers.cli.main import main
from otel_scorers.human_text import printable

from ..spans import conversation_turn

#: What each one would do: retitle the terminal, clear it, a one-character CSI, a C1 line break,
#: a line separator, a right-to-left override, a right-to-left isolate, DEL.
HOSTILE = ["\x1b]0;owned\x07", "\x1b[2J", "\u009b31m", "\u0085", "\u2028", "\u202e", "\u2067", "\x7f"]
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


@pytest.mark.parametrize("text", HOSTILE)
def test_printable_escapes_each_control_as_its_json_escape(text: str) -> None:
    shown = printable(f"a{text}b")
    assert RAW.search(shown) is None and "\n" not in shown
    assert json.loads(f'"{shown}"') == f"a{text}b"  # nothing lost: the escape reads back


def test_a_json_files_hostile_keys_reach_stderr_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = {key: 1 for key in HOSTILE}
    path = tmp_path / "keys.json"
    path.write_text(json.dumps(document))
    assert main(["runs", str(path)]) == 1
    err = capsys.readouterr().err
    assert "a JSON object with keys" in err
    assert RAW.search(err) is None
    assert "\\u001b]0;owned\\u0007" in err and "\\u009b31m" in err


def test_scorer_names_and_config_errors_reach_the_terminal_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = tmp_path / "traces.jsonl"
    provider = TracerProvider()
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from otel_scorers.runs.trace_writer import write_traces

    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    conversation_turn(provider.get_tracer("test"), "c1", "hello")
    write_traces(traces, exporter.get_finished_spans())
    name = "".join(HOSTILE)
    config = tmp_path / "scorers.yaml"
    config.write_text(json.dumps({"scorers": [{"type": "no_tool_errors", "name": name}]}))
    assert main(["score", str(traces), "-c", str(config), "--fail-under", f"{name}=1"]) == 0
    captured = capsys.readouterr()
    assert RAW.search(captured.err) is None, captured.err
    assert printable(name) in captured.err

    assert main(["validate", "-c", str(config)]) == 0
    assert RAW.search(capsys.readouterr().out.replace("\n", "")) is None

    bad = tmp_path / "bad.yaml"
    bad.write_text(json.dumps({"scorers": [{"type": "no_tool_errors", name: 1}]}))
    assert main(["validate", "-c", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "invalid config" in err and RAW.search(err) is None, err


def test_console_lines_escape_what_the_trace_says() -> None:
    out = io.StringIO()
    provider = TracerProvider()
    scoring = ScoringSpanProcessor(scorers=[checks.includes("sunny")], console=out)
    provider.add_span_processor(scoring)
    hostile = "".join(HOSTILE)
    conversation_turn(
        provider.get_tracer("test"), "c1", "weather?", answer=hostile, **{"gen_ai.agent.name": hostile}
    )
    scoring.force_flush()
    scoring.shutdown()
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("score "), out.getvalue()
    assert RAW.search(lines[0]) is None, lines[0]
    assert "\\u202e" in lines[0]


def test_the_sidecar_log_escapes_what_it_quotes(capsys: pytest.CaptureFixture[str]) -> None:
    from otel_scorers.sidecar.logs import setup_logging

    root = logging.getLogger()
    handlers = root.handlers[:]
    root.handlers = []  # as the sidecar's process starts: setup_logging makes its stderr handler
    try:
        setup_logging()
        logging.getLogger("otel_scorers.test").warning("refused a request from %s", "".join(HOSTILE))
    finally:
        root.handlers = handlers
    err = capsys.readouterr().err
    assert "refused a request from" in err and RAW.search(err.replace("\n", "")) is None, err


def test_score_and_runs_write_json_lines_with_every_control_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from otel_scorers.runs.trace_writer import write_traces

    hostile = "".join(HOSTILE)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    conversation_turn(
        provider.get_tracer("test"),
        f"c{hostile}",
        f"hi{hostile}",
        f"ok{hostile}",
        **{"gen_ai.agent.name": f"a{hostile}"},
    )
    traces = tmp_path / "traces.jsonl"
    write_traces(traces, exporter.get_finished_spans())
    config = tmp_path / "scorers.yaml"
    config.write_text(json.dumps({"scorers": [{"type": "includes", "args": {"expected": "nope"}}]}))
    assert main(["score", str(traces), "-c", str(config)]) == 0
    assert main(["runs", str(traces)]) == 0
    out = capsys.readouterr().out
    assert RAW.search(out.replace("\n", "")) is None, out
    documents = [json.loads(line) for line in out.splitlines()]
    assert {document["agent_name"] for document in documents} == {f"a{hostile}"}  # read back whole
    assert any(document.get("output") == f"ok{hostile}" for document in documents)


def test_calibrate_shows_what_the_labels_say_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = "".join(HOSTILE)
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        json.dumps({"scorer": f"tox{hostile}", "conversation_id": "c1", "label": "pass"}) + "\n"
    )
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({"scorers": [{"type": "no_tool_errors"}]}))
    traces = tmp_path / "traces.json"
    traces.write_text('{"resourceSpans": []}')
    main(["calibrate", "-c", str(config), "--labels", str(labels), str(traces)])
    err = capsys.readouterr().err
    assert "labels name no scorer" in err and "tox" in err
    assert RAW.search(err) is None
