"""`otel-scorers score` as a CI gate, through the real command: the summary on stderr, the
`--fail-under` gates and their exit code, the JUnit XML report, and `backfill` as its other name.

The input is the shipped `examples/traces.json`: the six scripted runs of the bundled example
agent (`DEMO_RUNS`), whose scripts say what each run did: one of the six has a failing tool
(Atlantis), two of the four weather answers with content give a temperature.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

from otel_scorers.demos.example_agent import DEMO_RUNS

ROOT = Path(__file__).resolve().parent.parent.parent
TRACES = ROOT / "examples" / "traces.json"
CONFIG = ROOT / "examples" / "scorers.yaml"


def run_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it, from the checkout's root unless told otherwise."""
    return subprocess.run(
        [sys.executable, "-m", "otel_scorers.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def row(stderr: str, scorer: str) -> list[str]:
    """The summary table's row of `scorer`, split on runs of two spaces."""
    (line,) = [line for line in stderr.splitlines() if line.startswith(scorer + " ")]
    return [cell.strip() for cell in line.split("  ") if cell.strip()]


def test_the_example_traces_hold_the_demo_agents_six_runs() -> None:
    result = run_cli("runs", str(TRACES))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count('"input":') == len(DEMO_RUNS) == 6
    for script in DEMO_RUNS:
        if script.capture_content:
            assert script.question in result.stdout


def test_fail_under_the_mean_exits_1_with_the_short_scorer_in_the_table() -> None:
    failing_tools = 1  # Atlantis, of the six runs
    mean = (6 - failing_tools) / 6
    result = run_cli("score", str(TRACES), "-c", str(CONFIG), "--fail-under", "no_tool_errors=0.9")
    assert result.returncode == 1, result.stderr
    assert row(result.stderr, "no_tool_errors") == [
        "no_tool_errors",
        "6",
        f"{mean:.3f}",
        "fail 1, pass 5",
        "0",
        "0",
        f"mean {mean:.3f} < 0.9: FAIL",
    ]
    assert (
        result.stderr.splitlines()[-1] == f"otel-scorers: gate failed: no_tool_errors mean {mean:.3f} < 0.9"
    )
    assert result.stdout.count("\n") == 22, "every score is still written, one JSON line each"

    passing = run_cli("score", str(TRACES), "-c", str(CONFIG), "--fail-under", "no_tool_errors=0.8")
    assert passing.returncode == 0, passing.stderr
    assert row(passing.stderr, "no_tool_errors")[-1] == f"mean {mean:.3f} >= 0.8: ok"


def test_fail_under_the_pass_rate_counts_pass_and_fail_labels_only() -> None:
    # Weather answers with content: Paris (21°C), Oslo (none), Atlantis (none), Lima (18°C); the
    # run without captured content is skipped, not failed.
    result = run_cli(
        "score", str(TRACES), "-c", str(CONFIG), "--fail-under", "gives-temperature:pass_rate=0.6"
    )
    assert result.returncode == 1
    assert row(result.stderr, "gives-temperature")[1:] == [
        "4",
        "0.500",
        "fail 2, pass 2",
        "1",
        "0",
        "pass_rate 0.500 < 0.6: FAIL",
    ]
    result = run_cli(
        "score", str(TRACES), "-c", str(CONFIG), "--fail-under", "gives-temperature:pass_rate=0.5"
    )
    assert result.returncode == 0, result.stderr


def test_the_summary_is_printed_without_a_terminal_and_without_a_gate() -> None:
    result = run_cli("score", str(TRACES), "-c", str(CONFIG))
    assert result.returncode == 0, result.stderr
    # 6 runs x (no_tool_errors, max_tool_calls) + 5 weather-agent runs x (called_tool, gives-temperature)
    assert "otel-scorers: scored 6 runs, 22 scores in " in result.stderr
    assert result.stderr.splitlines()[1].split() == [
        "scorer",
        "scored",
        "mean",
        "labels",
        "skipped",
        "errors",
        "gate",
    ]
    assert row(result.stderr, "called_tool")[1:] == ["5", "1.000", "pass 5", "0", "0", "-"]


def test_junit_xml_has_a_test_case_per_scorer_and_a_failure_for_the_short_one(tmp_path: Path) -> None:
    report = tmp_path / "reports" / "scores.xml"
    report.parent.mkdir()
    runs = run_cli("runs", str(TRACES)).stdout
    atlantis = next(line for line in runs.splitlines() if "Atlantis" in line)
    result = run_cli(
        "score",
        str(TRACES),
        "-c",
        str(CONFIG),
        "--fail-under",
        "no_tool_errors=0.9",
        "--fail-under",
        "called_tool=1",
        "--junit-xml",
        str(report),
    )
    assert result.returncode == 1
    root = ET.parse(report).getroot()
    assert root.tag == "testsuites"
    (suite,) = root
    assert suite.tag == "testsuite" and suite.get("name") == "otel-scorers"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "1", "0")
    assert (root.get("tests"), root.get("failures")) == ("4", "1")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert list(cases) == ["no_tool_errors", "called_tool", "max_tool_calls", "gives-temperature"]
    failure = cases["no_tool_errors"].find("failure")
    assert failure is not None and failure.get("message") == "mean 0.833 < 0.9"
    trace_id = atlantis.split('"trace_id":"')[1][:32]
    assert failure.text is not None and trace_id in failure.text and "get_weather" in failure.text
    for name in ("called_tool", "max_tool_calls", "gives-temperature"):
        assert cases[name].find("failure") is None and cases[name].find("error") is None
    system_out = cases["called_tool"].find("system-out")
    assert system_out is not None and system_out.text == (
        "scored 5, mean 1.000, labels pass 5, skipped 0, errors 0"
    )


def test_a_scorer_that_fails_on_every_run_makes_score_exit_1(tmp_path: Path) -> None:
    (tmp_path / "broken_scorers.py").write_text(
        "def always_fails(run):\n    raise RuntimeError('no key for the judge')\n"
    )
    config = tmp_path / "scorers.yaml"
    config.write_text("scorers:\n  - type: no_tool_errors\n  - type: broken_scorers:always_fails\n")
    report = tmp_path / "report.xml"
    result = run_cli(
        "score",
        str(TRACES),
        "-c",
        str(config),
        "--junit-xml",
        str(report),
        env={"PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])},
    )
    assert result.returncode == 1, result.stderr
    assert "otel-scorers: always_fails measured nothing: it failed on all 6 runs it tried" in result.stderr
    assert row(result.stderr, "always_fails")[1:] == ["0", "-", "-", "0", "6", "-"]
    cases = {case.get("name"): case for case in ET.parse(report).getroot().iter("testcase")}
    error = cases["always_fails"].find("error")
    assert error is not None and error.text is not None and "no key for the judge" in error.text
    assert cases["no_tool_errors"].find("error") is None


def test_a_judge_that_failed_on_every_run_it_tried_makes_score_exit_1_whatever_it_skipped(
    tmp_path: Path,
) -> None:
    with socket.socket() as probe:  # a port nothing listens on: every judge call is refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = tmp_path / "scorers.yaml"
    config.write_text(
        f"judge: {{model: openai/judge, api_base: 'http://127.0.0.1:{port}/v1', api_key: none, max_retries: 0}}\n"
        "scorers:\n  - type: no_tool_errors\n  - type: answer_relevancy\n"
    )
    report = tmp_path / "report.xml"
    result = run_cli("score", str(TRACES), "-c", str(config), "--junit-xml", str(report))
    # The run without captured content is skipped; the judge failed on every other one.
    skipped = sum(1 for script in DEMO_RUNS if not script.capture_content)
    tried = len(DEMO_RUNS) - skipped
    assert skipped == 1 and tried == 5
    assert result.returncode == 1, result.stderr
    assert row(result.stderr, "answer_relevancy")[1:] == ["0", "-", "-", str(skipped), str(tried), "-"]
    assert (
        f"otel-scorers: answer_relevancy measured nothing: it failed on all {tried} runs it tried "
        f"({skipped} skipped)" in result.stderr
    )
    cases = {case.get("name"): case for case in ET.parse(report).getroot().iter("testcase")}
    assert cases["answer_relevancy"].find("error") is not None
    # each error names the judge's address, where the connection was refused
    errors = [json.loads(line)["error"] for line in result.stdout.splitlines() if '"error":{' in line]
    assert len(errors) == tried
    assert all(
        error["message"].startswith(f"judge openai/judge at http://127.0.0.1:{port}/v1: ") for error in errors
    ), errors[0]


def test_a_gated_scorer_with_nothing_to_measure_fails(tmp_path: Path) -> None:
    config = tmp_path / "scorers.yaml"
    config.write_text("scorers:\n  - type: equals\n    args: {expected: nothing}\n    sampling: {rate: 0}\n")
    result = run_cli("score", str(TRACES), "-c", str(config), "--fail-under", "equals=0.5")
    assert result.returncode == 1
    assert "gate failed: equals mean: no scored runs (needs >= 0.5)" in result.stderr


def test_a_gate_naming_no_scorer_or_malformed_is_a_usage_error() -> None:
    result = run_cli("score", str(TRACES), "-c", str(CONFIG), "--fail-under", "no_tool_error=0.9")
    assert result.returncode == 2
    assert "--fail-under names no scorer of" in result.stderr and "no_tool_errors" in result.stderr
    result = run_cli("score", str(TRACES), "-c", str(CONFIG), "--fail-under", "no_tool_errors")
    assert result.returncode == 2 and "expected SCORER=THRESHOLD" in result.stderr
    result = run_cli("score", str(TRACES), "-c", str(CONFIG), "--fail-under", "no_tool_errors=90")
    assert result.returncode == 2 and "must be between 0 and 1" in result.stderr
    result = run_cli("score", str(TRACES), "-c", str(CONFIG), "--fail-under", "no_tool_errors:median=0.9")
    assert result.returncode == 2
    assert (
        "otel-scorers: --fail-under no_tool_errors:median: unknown statistic 'median' "
        "(the statistics: mean, pass_rate)" in result.stderr
    )


def test_backfill_is_another_name_for_score() -> None:
    result = run_cli("backfill", str(TRACES), "-c", str(CONFIG), "--fail-under", "no_tool_errors=0.9")
    assert result.returncode == 1 and "gate failed: no_tool_errors" in result.stderr
    listing = run_cli("--help").stdout
    assert "backfill" in listing
    assert "--fail-under" in run_cli("score", "--help").stdout


def test_the_docs_show_what_the_ci_gate_prints(tmp_path: Path) -> None:
    readme = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    shown = readme.split("$ otel-scorers score examples/traces.json", 1)[1].split("```", 1)[0]
    command, _, rest = shown.partition("> scores.jsonl\n")
    arguments = command.replace("\\\n", " ").split()
    output, _, exit_line = rest.partition("$ echo $?\n")
    (tmp_path / "examples").symlink_to(ROOT / "examples")  # the docs run it in the checkout
    result = run_cli("score", "examples/traces.json", *arguments, cwd=tmp_path)
    assert result.returncode == int(exit_line.strip())
    normalise = re.compile(r" in \d+\.\ds$")
    assert [normalise.sub("", line) for line in result.stderr.splitlines()] == [
        normalise.sub("", line) for line in output.splitlines()
    ]
    assert (tmp_path / "scores.xml").is_file()


def test_the_example_collector_config_records_traces_with_the_file_exporter() -> None:
    config = yaml.safe_load((ROOT / "examples" / "collector-record-traces.yaml").read_text())
    (traces,) = config["service"]["pipelines"].values()
    assert traces["receivers"] == ["otlp"] and traces["exporters"] == ["file/traces"]
    assert traces["processors"] == ["memory_limiter", "batch"]
    assert config["exporters"]["file/traces"]["path"].endswith(".jsonl")
    assert set(config["processors"]) == set(traces["processors"])


def test_the_example_traces_failing_tool_points_at_the_demo_agents_own_code() -> None:
    from otel_scorers.demos import example_agent

    module = Path(example_agent.__file__)
    source = module.read_text().splitlines()
    stacktraces = [
        attribute["value"]["stringValue"]
        for line in TRACES.read_text().splitlines()
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
        for event in span.get("events", [])
        for attribute in event.get("attributes", [])
        if attribute["key"] == "exception.stacktrace"
    ]
    assert len(stacktraces) == 1  # Atlantis
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\w+)\n {4}(.+)', stacktraces[0])
    assert frames
    for path, number, _function, code in frames:
        assert path == module.relative_to(ROOT).as_posix(), path
        assert source[int(number) - 1].strip() == code.strip()


def test_a_junit_report_stays_small_and_well_formed_whatever_the_traces_name(tmp_path: Path) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import StatusCode

    from otel_scorers.cli.score_summary import MAX_NAME_CHARS, MAX_REASON_CHARS
    from otel_scorers.runs.trace_writer import write_traces

    tool, agent = "t" * 1_000_000, "a" * 100_000
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    failing_runs = 25
    for _ in range(failing_runs):
        with (
            tracer.start_as_current_span(
                "invoke_agent",
                attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent},
            ),
            tracer.start_as_current_span(
                f"execute_tool {tool}",
                attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool},
            ) as span,
        ):
            span.set_status(StatusCode.ERROR, "down")
    traces = tmp_path / "traces.jsonl"
    write_traces(traces, exporter.get_finished_spans())
    config = tmp_path / "scorers.yaml"
    name = "n" * 100_000
    config.write_text(f"scorers:\n  - type: no_tool_errors\n    name: {name}\n")
    report = tmp_path / "report.xml"
    result = run_cli(
        "score", str(traces), "-c", str(config), "--fail-under", f"{name}=1", "--junit-xml", str(report)
    )
    assert result.returncode == 1
    size = report.stat().st_size
    # 20 failures listed, each a cut reason and agent name, and the scorer's name cut once
    assert size < 20 * (MAX_REASON_CHARS + MAX_NAME_CHARS + 200) + MAX_NAME_CHARS + 2_000, size
    (case,) = ET.parse(report).getroot().iter("testcase")
    assert case.get("name") == "n" * MAX_NAME_CHARS + f"... ({100_000 - MAX_NAME_CHARS} more characters)"
    failure = case.find("failure")
    assert failure is not None and failure.text is not None
    listed = failure.text.splitlines()
    assert len(listed) == 21 and listed[-1] == f"... and {failing_runs - 20} more"
    assert all("more characters)" in line for line in listed[:20])
    assert len(result.stderr) < 10_000  # the summary table's name is cut too
