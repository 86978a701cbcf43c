"""The `otel-scorers` command on real OTLP/JSON files, through its console entry point."""

from __future__ import annotations

import argparse
import gzip
import importlib.metadata
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from otel_scorers.cli.main import build_parser, main

from ..judge_server import ALL_RELEVANT, judge_server
from ..otlp_capture import OtlpCapture

TRACES = Path(__file__).parent.parent / "fixtures" / "traces" / "openai-v2"
EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
CONFIG = """
scorers:
  - type: called_tool
    args: {tool: get_weather}
  - type: includes
    name: says-sunny
    args: {expected: sunny}
"""


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "otel_scorers.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )


def lines(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_runs_prints_one_json_line_per_rebuilt_run() -> None:
    result = run_cli("runs", str(TRACES / "tool_then_answer.json"), str(TRACES / "two_runs.json"))
    assert result.returncode == 0, result.stderr
    runs = lines(result.stdout)
    assert len(runs) == 3
    first = next(run for run in runs if run["input"] == "What is the weather in Paris?")
    assert set(first) == {
        "trace_id",
        "span_id",
        "agent_name",
        "convention",
        "input",
        "output",
        "tool_calls",
        "missing",
    }
    assert first["agent_name"] == "weather_agent" and first["convention"] == "genai"
    assert first["tool_calls"] == [
        {
            "name": "get_weather",
            "call_id": first["tool_calls"][0]["call_id"],
            "arguments": {"city": "Paris"},
            "result": "Sunny, 21°C",
            "state": "ok",
        }  # type: ignore[index]
    ]
    assert len(str(first["trace_id"])) == 32 and len(str(first["span_id"])) == 16


def test_runs_says_what_the_instrumentation_never_records() -> None:
    trace = TRACES.parent / "openai-agents-openllmetry" / "tool_then_answer.json"
    result = run_cli("runs", str(trace))
    assert result.returncode == 0, result.stderr
    (run,) = lines(result.stdout)
    assert (run["output"], run["missing"], run["unrecorded"]) == (None, ["output"], ["output"])


def test_collector_file_format_gzip_and_bad_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    requests = [
        json.loads((TRACES / name).read_text()) for name in ("tool_then_answer.json", "failing_tool.json")
    ]
    body = (
        "\n".join(json.dumps(request) for request in requests[:1])
        + "\n{not json\n"
        + json.dumps(requests[1])
        + "\n"
    )
    path = tmp_path / "export.jsonl.gz"
    path.write_bytes(gzip.compress(body.encode()))
    code = main(["runs", str(path)])
    captured = capsys.readouterr()
    assert code == 1, "bad input is reported in the exit code"
    assert f"{path}:2" in captured.err and "not JSON" in captured.err
    runs = lines(captured.out)
    assert len(runs) == 2, "the bad line loses nothing else"
    failing = next(run for run in runs if run["tool_calls"][0]["state"] == "error")  # type: ignore[index]
    assert failing["agent_name"] == "weather_agent"


def test_score_prints_one_line_per_run_and_binding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "scorers.yaml"
    config.write_text(CONFIG)
    code = main(
        ["score", str(TRACES / "tool_then_answer.json"), str(TRACES / "no_content.json"), "-c", str(config)]
    )
    assert code == 0
    scores = lines(capsys.readouterr().out)
    assert len(scores) == 4
    assert set(scores[0]) == {
        "trace_id",
        "span_id",
        "agent_name",
        "scorer",
        "value",
        "label",
        "reason",
        "skipped",
        "error",
        "evaluator_version",
    }
    by = {(s["trace_id"], s["scorer"]): s for s in scores}
    skipped = [s for s in by.values() if s["skipped"]]
    assert len(skipped) == 1 and skipped[0]["scorer"] == "says-sunny" and skipped[0]["value"] is None
    assert all(s["value"] == 1.0 for s in by.values() if s["scorer"] == "called_tool")


def test_validate(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(CONFIG)
    result = run_cli("validate", "-c", str(good))
    assert result.returncode == 0 and "valid (2 scorers: called_tool, says-sunny)" in result.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text(CONFIG.replace("tool: get_weather", "tool: get_weather, tims: 2"))
    result = run_cli("validate", "-c", str(bad))
    assert result.returncode == 2
    assert "scorers[0].args.tims: unknown argument for called_tool" in result.stderr


def test_demo_prints_the_score_table_with_answer_relevancy_when_a_judge_model_is_set() -> None:
    with judge_server(lambda _body: ALL_RELEVANT) as server:
        result = run_cli(
            "demo",
            env={
                "OTEL_SCORERS_JUDGE_MODEL": "openai/judge",
                "OTEL_SCORERS_JUDGE_API_BASE": server.url,
                "OTEL_SCORERS_JUDGE_API_KEY": "test-key",
            },
        )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    out = result.stdout
    assert out.count("answer_relevancy   relevant  1") == 5, "every run with content was judged"
    assert server.calls == 5
    assert "run 1  weather-agent" in out and "run 6  weather-agent" in out
    assert "gives-temperature  fail  0" in out
    assert "no_tool_errors     fail  0" in out
    assert "skipped" in out and "(not captured)" in out
    assert "(not on run span)" not in out, "hold mode put every score on its run span"
    assert "gen_ai.evaluation.result events" in out


def test_demo_judges_with_a_keyless_local_judge_at_its_api_base() -> None:
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    with judge_server(lambda _body: ALL_RELEVANT) as server:
        result = subprocess.run(
            [sys.executable, "-m", "otel_scorers.cli", "demo"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env={
                **env,
                "OTEL_SCORERS_JUDGE_MODEL": "openai/judge",
                "OTEL_SCORERS_JUDGE_API_BASE": server.url,
            },
        )
    assert result.returncode == 0, result.stderr
    assert "LLM judge off" not in result.stdout
    assert result.stdout.count("answer_relevancy   relevant  1") == 5
    assert server.calls == 5


def test_version_prints_the_installed_packages_version() -> None:
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"otel-scorers {importlib.metadata.version('otel-scorers')}"


def test_every_command_and_argument_has_help_text() -> None:
    parser = build_parser()
    (commands,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    assert set(commands.choices) == {
        "demo",
        "runs",
        "score",
        "backfill",
        "calibrate",
        "judge-requests",
        "fake-judge",
        "validate",
        "serve",
    }
    # An alias is listed with its command: "score (backfill)".
    listed = {
        name.strip("() ,"): choice.help
        for choice in commands._choices_actions
        for name in str(choice.metavar).split()
    }
    for name, subparser in commands.choices.items():
        assert listed.get(name), f"{name} has a one-line help in the command list"
        for action in subparser._actions:
            assert action.help, f"{name} {action.option_strings or action.dest} has help text"
    for action in parser._actions:
        assert action.help, f"otel-scorers {action.option_strings or action.dest} has help text"


def test_serve_help_says_it_needs_the_sidecar_extra_installed_from_the_checkout() -> None:
    result = run_cli("serve", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "pip install -e '.[sidecar]' in a checkout of the otel-scorers repository" in text
    assert "make sidecar" in text


def test_validate_reports_every_error_and_never_a_traceback(tmp_path: Path) -> None:
    one = tmp_path / "one.yaml"
    one.write_text("scorers:\n  - type: no_tool_errors\n")
    result = run_cli("validate", "-c", str(one))
    assert result.returncode == 0 and result.stdout.strip() == f"{one}: valid (1 scorer: no_tool_errors)"
    bad = tmp_path / "bad.yaml"
    bad.write_text("scorerz: []\nscorers:\n  - type: includes\n    timeout_s: .inf\n")
    result = run_cli("validate", "-c", str(bad))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"otel-scorers: invalid config: {bad}: 3 errors:",
        "  scorers[0].timeout_s: Input should be a finite number",
        "  scorerz: unknown key; did you mean 'scorers'?",
        "  scorers[0].args: includes needs argument(s): expected",
    ]
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes(b"scorers:\n  - type: includes\n    args: {expected: caf\xe9}\n")
    result = run_cli("validate", "-c", str(latin1))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert (
        result.stderr.strip()
        == f"otel-scorers: invalid config: {latin1}: not UTF-8 text: byte 0xe9 on line 3 cannot be decoded"
    )


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_demo_to_an_unreachable_endpoint_says_nothing_was_sent_without_waiting_on_retries() -> None:
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    result = run_cli("demo", "--otlp-endpoint", endpoint)
    assert result.returncode == 1
    last = result.stdout.splitlines()[-1]
    assert last.startswith(f"Nothing was sent to {endpoint}: cannot connect to 127.0.0.1:")
    assert "All of it was sent" not in result.stdout
    assert "went out" not in result.stdout, "nothing says the scores went anywhere"
    # the exporter's retries (each logged as a transient error) were not waited out
    assert "Transient error" not in result.stderr and "Failed to export" not in result.stderr


def test_demo_sends_every_span_event_and_metric_to_a_real_otlp_receiver() -> None:
    with OtlpCapture() as capture:
        result = run_cli("demo", "--otlp-endpoint", capture.endpoint)
        assert result.returncode == 0, result.stderr
        spans, events, metrics = (
            len(capture.span_list()),
            len(list(capture.log_records())),
            capture.metric_names(),
        )
    assert spans > 0 and events > 0 and "gen_ai.evaluation.results" in metrics
    assert result.stdout.splitlines()[-1] == (
        f"All of it was sent over OTLP (grpc) to {capture.endpoint}: "
        f"{spans} spans, {events} events and {len(metrics)} metrics."
    )


def test_demo_says_which_signals_an_endpoint_refused() -> None:
    with OtlpCapture() as capture:
        capture.fail_with = grpc.StatusCode.INVALID_ARGUMENT
        result = run_cli("demo", "--otlp-endpoint", capture.endpoint)
    assert result.returncode == 1
    assert result.stdout.splitlines()[-1] == (
        f"Sending over OTLP (grpc) to {capture.endpoint} failed for the spans, events and metrics; "
        "the exporter's messages above say why."
    )


def test_json_that_is_not_otlp_is_named_and_ends_in_exit_1(tmp_path: Path) -> None:
    jaeger = tmp_path / "jaeger.json"
    jaeger.write_text(json.dumps({"data": [{"traceID": "abc", "spans": [], "processes": {}}]}))
    result = run_cli("runs", str(jaeger))
    assert result.returncode == 1
    assert result.stdout == ""
    assert f"otel-scorers: skipped {jaeger}: this looks like Jaeger's JSON export" in result.stderr
    assert '{"resourceSpans": [...]}' in result.stderr
    assert f"otel-scorers: nothing to work on: no spans were read from {jaeger}" in result.stderr
    logs = tmp_path / "logs.jsonl"
    logs.write_text(
        json.dumps({"resourceLogs": []}) + "\n" + json.dumps([{"traceId": "1", "kind": "CLIENT"}])
    )
    result = run_cli("score", str(logs), "-c", str(EXAMPLES / "scorers.yaml"))
    assert result.returncode == 1
    assert f"{logs}:1: these are OTLP logs, not traces" in result.stderr
    assert f"{logs}:2: this looks like Zipkin's JSON" in result.stderr


def test_traces_without_an_agent_run_say_so_and_exit_1(tmp_path: Path) -> None:
    request = json.loads((TRACES / "tool_then_answer.json").read_text())
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            scope["spans"] = [s for s in scope["spans"] if not s["name"].startswith("invoke_agent")]
            for span in scope["spans"]:  # without their run, model and tool spans make no run
                span["attributes"] = []
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(request))
    result = run_cli("runs", str(plain))
    assert result.returncode == 1 and result.stdout == ""
    assert "none of them an agent run" in result.stderr


def test_one_span_without_a_run_is_counted_in_the_singular_and_no_table_of_zeros_follows(
    tmp_path: Path,
) -> None:
    request = json.loads((TRACES / "tool_then_answer.json").read_text())
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            scope["spans"] = [s for s in scope["spans"] if not s["name"].startswith("invoke_agent")]
            for span in scope["spans"]:
                span["attributes"] = []
    first = next(s for rs in request["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"])
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [first]}]}]}
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(request))
    config = tmp_path / "scorers.yaml"
    config.write_text("scorers:\n  - type: no_tool_errors\n")
    result = run_cli("score", str(plain), "-c", str(config))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"otel-scorers: nothing to work on: read 1 span in 1 trace from {plain}, none of them an agent run "
        "(what marks one, per instrumentation: docs/conventions.md)"
    ]


def test_jaegers_query_api_reply_is_read_as_the_otlp_it_wraps(tmp_path: Path) -> None:
    wrapped = tmp_path / "jaeger-api-v3.json"
    wrapped.write_text(json.dumps({"result": json.loads((TRACES / "tool_then_answer.json").read_text())}))
    result = run_cli("runs", str(wrapped))
    assert result.returncode == 0, result.stderr
    assert [run["input"] for run in lines(result.stdout)] == ["What is the weather in Paris?"]


def test_demo_writes_its_traces_for_runs_and_score(tmp_path: Path) -> None:
    from otel_scorers.demos.example_agent import DEMO_RUNS

    out = tmp_path / "traces.jsonl"
    result = run_cli("demo", "--traces-out", str(out))
    assert result.returncode == 0, result.stderr
    assert f"are in {out}" in result.stdout
    assert len(out.read_text().splitlines()) == len(DEMO_RUNS), "one OTLP request per line, one per trace"
    runs = run_cli("runs", str(out))
    assert runs.returncode == 0, runs.stderr
    rebuilt = lines(runs.stdout)
    assert [run["input"] for run in rebuilt] == [
        script.question if script.capture_content else None for script in DEMO_RUNS
    ]
    assert all(not run["trace_id"].startswith("0000") for run in rebuilt)
    assert "otel_scorers.score" not in out.read_text(), "the traces as the agent made them, unscored"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"outputs": [".rel:x"], "scorers": [{"type": "includes", "args": {"expected": "x"}}]},
            "outputs[0]: cannot import output '.rel:x': cannot import module '.rel': give its whole name",
        ),
        (
            {"scorers": [{"type": "raises_at_import:scorer"}]},
            "scorers[0].type: scorer 'raises_at_import:scorer': cannot import module 'raises_at_import': "
            "it raised RuntimeError as it was imported: the module's own failure",
        ),
        (
            {
                "outputs": ["raises_at_import:output"],
                "scorers": [{"type": "includes", "args": {"expected": "x"}}],
            },
            "outputs[0]: cannot import output 'raises_at_import:output': cannot import module",
        ),
    ],
)
def test_validate_names_a_module_that_cannot_be_imported_without_a_traceback(
    tmp_path: Path, entry: dict[str, object], message: str
) -> None:
    (tmp_path / "raises_at_import.py").write_text('raise RuntimeError("the module\'s own failure")\n')
    config = tmp_path / "scorers.yaml"
    config.write_text(json.dumps(entry))
    result = run_cli(
        "validate",
        "-c",
        str(config),
        env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"},
    )
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
