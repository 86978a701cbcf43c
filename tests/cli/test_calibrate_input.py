"""`calibrate` against hostile input: a kappa bound outside kappa's range (or NaN) is refused, the
labels file is read a line at a time with its lines and blank runs bounded, a deep line is an
error naming it, and what people wrote reaches the terminal escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers.cli.main import main
from otel_scorers.labels.label_records import MAX_LABEL_LINE_BYTES
from otel_scorers.runs.otlp_files import MAX_BLANK_LINES
from otel_scorers.runs.trace_writer import write_traces

from ..spans import conversation_turn

HOSTILE = "\x1b]0;owned\x07\u009b31m\u2028\u202e"
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def files(tmp_path: Path, labels: str) -> list[str]:
    """The arguments of a calibrate over one real run (its `no_tool_errors` passes) and `labels`."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    conversation_turn(provider.get_tracer("test"), "c1", "hello")
    traces = tmp_path / "traces.jsonl"
    write_traces(traces, exporter.get_finished_spans())
    (span,) = exporter.get_finished_spans()
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({"scorers": [{"type": "no_tool_errors", "name": f"checks{HOSTILE}"}]}))
    labels_file = tmp_path / "labels.jsonl"
    labels_file.write_text(
        labels.replace("TRACE", f"{span.context.trace_id:032x}").replace(
            "SPAN", f"{span.context.span_id:016x}"
        )
    )
    return ["calibrate", "-c", str(config), "--labels", str(labels_file), str(traces)]


@pytest.mark.parametrize("bound", ["nan", "-5", "1.5", "inf"])
def test_a_kappa_bound_outside_kappa_s_range_is_refused(
    tmp_path: Path, bound: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*files(tmp_path, ""), "--min-kappa", bound])
    assert exited.value.code == 2
    assert f"must be between -1 and 1 (kappa's range), got {bound}" in capsys.readouterr().err


def test_what_people_wrote_reaches_the_terminal_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    label = {
        "scorer": f"checks{HOSTILE}",
        "trace_id": "TRACE",
        "span_id": "SPAN",
        "label": "fail",  # the check passes: a disagreement, shown with its reviewer and comment
        "reviewer": f"ana{HOSTILE}",
        "comment": f"wrong{HOSTILE}",
    }
    stray = {**label, "scorer": f"other{HOSTILE}"}
    main([*files(tmp_path, json.dumps(label) + "\n" + json.dumps(stray) + "\n"), "--min-kappa", "0.5"])
    out, err = capsys.readouterr()
    assert RAW.search(err.replace("\n", "")) is None, err
    assert RAW.search(out.replace("\n", "")) is None, out
    assert "ana\\u001b]0;owned" in err and "other\\u001b" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[" * 100_000 + "]" * 100_000 + "\n", ":1: not a label:"),
        ("\n" * (MAX_BLANK_LINES + 5) + "{}\n", f"more than {MAX_BLANK_LINES:,} blank lines in a row"),
        (
            '{"comment": "' + "x" * MAX_LABEL_LINE_BYTES + '"}\n',
            f":1: not a label: longer than {MAX_LABEL_LINE_BYTES:,}",
        ),
    ],
    ids=["deep", "blank", "long"],
)
def test_a_hostile_labels_file_is_an_error_naming_its_line(
    tmp_path: Path, content: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(files(tmp_path, content)) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_label_outside_its_scorers_range_is_refused_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `no_tool_errors` is pass/fail: a value of 3 is none it could give.
    label = {
        "scorer": f"checks{HOSTILE}",
        "trace_id": "TRACE",
        "span_id": "SPAN",
        "value": 3,
        "reviewer": "ana",
    }
    main(files(tmp_path, json.dumps(label) + "\n"))
    err = capsys.readouterr().err
    assert "1 label refused, the first: the label of 'checks\\x1b]0;owned" in err, err
    assert "by 'ana' has the value 3, outside the scorer's range (0 or 1 (pass/fail))" in err, err
    assert RAW.search(err.replace("\n", "")) is None, err
