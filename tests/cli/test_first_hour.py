"""What a new user met in the first hour: a config of `conventions:` alone reads traces with
`runs -c`; `--explain` says when a described JSON path matched nothing; options are never
abbreviated; counts are singular when one; and the pages agree with each other and the Makefile
on the figures they both state."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from otel_scorers.cli.main import build_parser
from otel_scorers.runs.trace_writer import write_traces
from tests.cli.test_score_gate import ROOT, run_cli

ACME = """\
conventions:
  - name: acme
    scope: acme.agents
    run:
      when: {attributes: {acme.kind: agent}}
      agent_name: acme.agent
      input: {attribute: acme.request, path: text}
      output: {attribute: acme.reply, path: answer}
"""


def acme_trace(path: Path) -> Path:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    attributes = {
        "acme.kind": "agent",
        "acme.agent": "helper",
        "acme.request": json.dumps({"text": "Where is my order?"}),
        "acme.reply": json.dumps({"reply": "On its way."}),  # not under `answer`: the path misses
    }
    with provider.get_tracer("acme.agents").start_as_current_span("acme run", attributes=attributes):
        pass
    provider.shutdown()
    write_traces(path, exporter.get_finished_spans())
    return path


def test_a_config_of_conventions_alone_reads_traces(tmp_path: Path) -> None:
    config = tmp_path / "acme.yaml"
    config.write_text(ACME)
    result = run_cli("runs", "-c", str(config), str(acme_trace(tmp_path / "trace.json")))
    assert result.returncode == 0, result.stderr
    (run,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert (run["convention"], run["agent_name"], run["input"]) == ("acme", "helper", "Where is my order?")


def test_explain_says_which_path_matched_nothing(tmp_path: Path) -> None:
    config = tmp_path / "acme.yaml"
    config.write_text(ACME)
    result = run_cli("runs", "-c", str(config), "--explain", str(acme_trace(tmp_path / "trace.json")))
    assert "no match acme.reply: path 'answer' matched nothing in its value" in result.stdout, result.stdout
    assert "acme.request: path 'text'" not in result.stdout  # the path that matched is not listed


@pytest.mark.parametrize(
    "argv",
    [["serve", "-c", "x.yaml", "--consol"], ["score", "t.json", "-c", "x.yaml", "--summary", "s.json"]],
)
def test_an_abbreviated_option_is_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(argv)
    assert exited.value.code == 2
    assert "unrecognized arguments" in capsys.readouterr().err


def test_one_label_is_one_label(tmp_path: Path) -> None:
    (run,) = [
        json.loads(line)
        for line in run_cli("runs", str(ROOT / "examples" / "traces.json")).stdout.splitlines()
    ][:1]
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        json.dumps(
            {
                "scorer": "no_tool_errors",
                "trace_id": run["trace_id"],
                "span_id": run["span_id"],
                "label": "pass",
            }
        )
        + "\n"
    )
    config = tmp_path / "scorers.yaml"
    config.write_text("scorers:\n  - type: no_tool_errors\n")
    result = run_cli(
        "calibrate", "-c", str(config), "--labels", str(labels), str(ROOT / "examples" / "traces.json")
    )
    assert "otel-scorers: 1 label\n" in result.stderr and "1 labels" not in result.stderr


def test_readme_and_makefile_give_the_same_make_test_time() -> None:
    readme = re.search(r"~(\d+) min lint, types and tests", (ROOT / "README.md").read_text())
    makefile = re.search(r"make test takes about (\d+) min", (ROOT / "Makefile").read_text())
    assert readme is not None and makefile is not None
    assert readme.group(1) == makefile.group(1)


def test_the_pages_name_one_share_of_the_cpu_for_otlp_written_scores() -> None:
    """README and the in-process page state the same share, the one performance.md measures
    (281 µs written as OTLP against 911 to 929 through the providers: about a third)."""
    readme = re.search(r"for about (a \w+) of the CPU", (ROOT / "README.md").read_text())
    in_process = re.search(r"for (a \w+) of the\s+CPU", (ROOT / "docs" / "in-process.md").read_text())
    assert readme is not None and in_process is not None
    assert readme.group(1) == in_process.group(1) == "a third"


def test_the_sidecar_page_says_what_the_traffic_tool_prints() -> None:
    page = " ".join((ROOT / "docs" / "sidecar.md").read_text().split())
    assert "it says how many runs and spans it sent" in page
    source = (ROOT / "otel_scorers" / "demos" / "example_traffic.py").read_text()
    assert "sent ({counted(sent.spans, 'span')}) to {destination}" in source


def test_the_instrumentation_page_names_the_genai_tool_attributes() -> None:
    page = (ROOT / "docs" / "instrumentations.md").read_text()
    for attribute in ("gen_ai.tool.name", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"):
        assert f"| `{attribute}` |" in page
