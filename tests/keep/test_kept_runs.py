"""Failing runs kept as a test set: live scores (the in-process processor, from its `keep:`
config) write the failing runs' traces to a file, which `score --baseline` replays and fails on
for the scorer that failed them; the file read again rebuilds the same runs; it rotates at its
size; `score --keep-failing` keeps what a backfill failed."""

from __future__ import annotations

import json
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers import ScoringSpanProcessor
from otel_scorers.config import load_config
from otel_scorers.keep.rotating_file import RotatingFile
from otel_scorers.keep.run_trace import run_trace_line
from otel_scorers.runs.otlp_files import InputProblem, runs_from_files
from otel_scorers.runs.trace_writer import write_traces
from tests.cli.test_score_baseline import baseline
from tests.cli.test_score_gate import run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def agent_runs(provider: TracerProvider, answers: list[str]) -> None:
    """One GenAI agent run per answer, each calling a tool, through a real tracer."""
    tracer = provider.get_tracer("agent")
    for number, answer in enumerate(answers):
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "weather",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": f"weather {number}?"}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
            ),
        }
        with tracer.start_as_current_span("invoke_agent weather", attributes=attributes):
            tool = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "forecast",
                "gen_ai.tool.call.id": f"call-{number}",
                "gen_ai.tool.call.arguments": json.dumps({"day": number}),
                "gen_ai.tool.call.result": "sunny",
            }
            with tracer.start_as_current_span("execute_tool forecast", attributes=tool):
                pass


def test_live_failing_runs_kept_fail_the_pull_request_gate(tmp_path: Path) -> None:
    kept = tmp_path / "failing-runs.jsonl"
    config = tmp_path / "scorers.yaml"
    config.write_text(
        "scorers:\n  - type: includes\n    args: {expected: sunny}\n  - type: no_tool_errors\n"
        f"keep: {{path: {json.dumps(str(kept))}, failing: [includes]}}\n"
    )
    provider = TracerProvider()
    processor = ScoringSpanProcessor.from_config(config, tracer_provider=provider, outputs=[])
    provider.add_span_processor(processor)
    answers = ["It is sunny."] * 30 + ["It rains."] * 12
    agent_runs(provider, answers)
    assert processor.force_flush()
    provider.shutdown()

    # the twelve runs the includes check failed, each with its text and tool call
    runs = list(runs_from_files([kept], problems := list[InputProblem]()))
    assert problems == [] and len(runs) == 12
    assert {run.output for run in runs} == {"It rains."}
    assert all(run.tool_calls[0].name == "forecast" and run.tool_calls[0].result == "sunny" for run in runs)

    # the main branch passed 95 of 100; replayed, the kept runs fail the gate for `includes` only
    summary = baseline(tmp_path, 100, 95)
    result = run_cli("score", str(kept), "-c", str(config), "--baseline", summary)
    assert result.returncode == 1, result.stderr
    assert "regression: includes pass_rate 0.950 -> 0.000" in result.stderr


def test_a_run_kept_reads_back_as_the_same_run(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent_runs(provider, ["It rains."])
    provider.shutdown()
    original_file = tmp_path / "original.json"
    write_traces(original_file, exporter.get_finished_spans())
    (original,) = runs_from_files([original_file], [])
    kept = tmp_path / "kept.jsonl"
    kept.write_bytes(run_trace_line(original))
    (again,) = runs_from_files([kept], [])
    fields = (
        "trace_id",
        "span_id",
        "agent_name",
        "input",
        "output",
        "tool_calls",
        "status",
        "start_ns",
        "end_ns",
    )
    for field in fields:
        assert getattr(again, field) == getattr(original, field), field


def test_the_file_rotates_at_its_size_keeping_its_backups(tmp_path: Path) -> None:
    path = tmp_path / "kept.jsonl"
    file = RotatingFile(path, max_bytes=1000, backups=2)
    line = b"x" * 99 + b"\n"  # 100 bytes: ten to a file
    for _ in range(45):
        assert file.append(line)
    sizes = [p.stat().st_size for p in (path, tmp_path / "kept.jsonl.1", tmp_path / "kept.jsonl.2")]
    assert sizes == [500, 1000, 1000]
    assert not (tmp_path / "kept.jsonl.3").exists()
    assert not file.append(b"y" * 1001) and file.too_long == 1


def test_score_keeps_the_runs_a_scorer_failed(tmp_path: Path) -> None:
    kept = tmp_path / "kept.jsonl"
    result = run_cli(
        "score", str(EXAMPLES / "traces.json"), "-c", str(EXAMPLES / "scorers.yaml"),
        "--keep-failing", str(kept), "--keep-scorer", "no_tool_errors",
    )  # fmt: skip
    assert "kept 1 run in" in result.stderr, result.stderr
    (run,) = runs_from_files([kept], [])
    assert run.tool_calls[0].state == "error"  # the example run whose tool failed
    config = load_config(EXAMPLES / "scorers.yaml")
    assert config.keep is None  # kept by the command line alone


def test_the_sidecar_s_two_scoring_processes_keep_the_failing_runs_in_one_file(tmp_path: Path) -> None:
    """Twelve traces over two scoring processes, four of them the example run whose tool fails:
    the file holds those four runs, each a whole line, none twice, whichever process scored it."""
    from otel_scorers.demos.example_agent import DEMO_RUNS
    from tests.otlp_capture import OtlpCapture
    from tests.sidecar_harness import RunningSidecar, agent_spans, encode, send_grpc, sidecar_document
    from tests.waiting import wait_until

    kept = tmp_path / "failing-runs.jsonl"
    failing_tool = DEMO_RUNS[2]  # "weather in Atlantis": its tool fails
    scripts = [*DEMO_RUNS[:2], failing_tool] * 4
    with OtlpCapture() as capture:
        document = sidecar_document(capture.endpoint, scoring_processes=2, decision_wait_s=0.05)
        document["keep"] = {"path": str(kept), "failing": ["no_tool_errors"]}
        with RunningSidecar(document) as sidecar:
            for script in scripts:
                send_grpc(sidecar.grpc_endpoint, encode(agent_spans([script])).SerializeToString())
            wait_until(lambda: kept.exists() and len(kept.read_bytes().splitlines()) >= 4, timeout_s=30)
    runs = list(runs_from_files([kept], problems := list[InputProblem]()))
    assert problems == [] and len(runs) == 4
    assert len({run.trace_id for run in runs}) == 4
    assert all(run.tool_calls[0].state == "error" for run in runs)
