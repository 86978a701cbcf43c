"""A sidecar soak on loopback: what a long run with judged conversations leaves in the sidecar's log.

`otel-scorers serve` (a child process, scoring in its own thread) gets agent runs over OTLP/gRPC
at a steady rate, as conversations of three turns. It scores each run with a quick check and a
judged run scorer (`answer_relevancy`), and each conversation, once it has gone idle, with a judged
conversation scorer (`multi_turn`); both judges are the scripted OpenAI-compatible server of the
tests, answering after 50 ms. Scores go over OTLP to a capturing receiver, and to the agreement
join of the receiving process (`labels:`), which the scoring process sends its conversation
scores to.

Printed: what was sent, what came back (evaluation spans of runs and of conversations, and how many
`multi_turn` scores carry a value), the judge's requests, the sidecar's exit code, and how many of
its log lines name an asyncio or litellm failure (a task destroyed while pending, a traceback, a
closed or foreign event loop, a coroutine never awaited, an ERROR line, litellm's own lines).

    python bench/soak.py [--seconds 900] [--runs-per-second 150]
"""

from __future__ import annotations

import argparse
import json
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
import yaml
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers.span_record import OWN_SCOPE
from tests.judge_server import JudgeServer
from tests.otlp_capture import OtlpCapture, attrs
from tests.sidecar_harness import ServeProcess, encode
from tests.spans import conversation_turn

TURNS = 3
FAILURE_MARKS = (
    "Task was destroyed",
    "Traceback",
    "Event loop is closed",
    "attached to a different loop",
    "RuntimeError",
    "never awaited",
    "ERROR",
    "litellm",
)


def reply(body: dict[str, Any]) -> str:
    """The conversation judge's criterion is met; the run judge finds every answer on topic."""
    if "criterion" in json.dumps(body):
        return json.dumps({"satisfied": True, "reason": "resolved"})
    return json.dumps({"statements": [{"statement": "done", "verdict": "yes", "reason": "on topic"}]})


def sidecar_config(judge_url: str, endpoint: str) -> dict[str, Any]:
    return {
        "scorers": [{"type": "no_tool_errors"}, {"type": "answer_relevancy", "name": "relevant"}],
        "judge": {"model": "openai/test-judge", "api_base": judge_url, "api_key": "test-key"},
        "conversations": {
            "max_turns": TURNS,
            "idle_timeout_s": 5,
            "tick_s": 0.2,
            "scorers": [{"type": "multi_turn", "args": {"criterion": "The agent resolved the request"}}],
        },
        # The agreement join, held by the receiving process: every conversation score made in
        # the scoring process travels back to it (no label comes, so the scores expire there).
        "labels": {"wait_s": 60},
        "sidecar": {
            "grpc": {"port": 0},
            "http": {"port": 0},
            "decision_wait_s": 0.2,
            "shutdown_timeout_s": 10,
            "export": {"endpoint": endpoint, "batch_delay_s": 0.2, "metric_interval_s": 5},
        },
    }


def send_conversations(grpc_port: int, seconds: float, rate: float) -> tuple[int, int, float]:
    """Conversations of `TURNS` runs, `rate` runs a second for `seconds`: (runs, conversations,
    seconds it took). A refused export is retried, as a collector would."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent")
    with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        start = time.monotonic()
        runs = conversations = 0
        while time.monotonic() - start < seconds:
            conversations += 1
            for turn in range(TURNS):
                # Every text new: the judge's cache answers none of them.
                conversation_turn(
                    tracer, f"soak-{conversations}", f"request {turn} of {conversations}", "done"
                )
            body = encode(exporter.get_finished_spans()).SerializeToString()
            exporter.clear()
            for _ in range(20):
                try:
                    export(body, timeout=10)
                    break
                except grpc.RpcError:
                    time.sleep(0.5)
            runs += TURNS
            time.sleep(max(0.0, start + runs / rate - time.monotonic()))
        return runs, conversations, time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=900)
    parser.add_argument("--runs-per-second", type=float, default=150)
    parser.add_argument("--log", type=Path, help="where to write the sidecar's log")
    args = parser.parse_args()

    judge = JudgeServer(reply, latency_s=0.05).start()
    try:
        with OtlpCapture() as capture, tempfile.TemporaryDirectory() as workdir:
            config = Path(workdir) / "soak.yaml"
            config.write_text(yaml.safe_dump(sidecar_config(judge.url, capture.endpoint)))
            serve = ServeProcess(config)
            try:
                runs, conversations, elapsed = send_conversations(
                    serve.grpc_port(60), args.seconds, args.runs_per_second
                )
                # The last conversations go idle (5 s) and are judged; then a graceful stop.
                time.sleep(8)
                serve.process.send_signal(signal.SIGTERM)
                code = serve.process.wait(40)
            finally:
                serve.stop()
            own = [attrs(span.attributes) for _, scope, span in capture.spans() if scope == OWN_SCOPE]
    finally:
        judge.stop()
    of_conversations = [a for a in own if "gen_ai.conversation.id" in a]
    multi_turn = sum(
        1
        for a in of_conversations
        if a.get("gen_ai.evaluation.name") == "multi_turn" and "gen_ai.evaluation.score.value" in a
    )
    print(
        f"sent {runs:,} runs in {elapsed:.0f} s ({runs / elapsed:.1f} a second), {conversations:,} conversations"
    )
    print(
        f"evaluation spans received: {len(own) - len(of_conversations):,} of runs,"
        f" {len(of_conversations):,} of conversations ({multi_turn:,} multi_turn scores with a value);"
        f" judge requests: {judge.calls:,}"
    )
    by_scorer: dict[str, int] = {}
    for a in own:
        name = f"{a.get('gen_ai.evaluation.name')} ({'value' if 'gen_ai.evaluation.score.value' in a else a.get('error.type') or 'skipped'})"
        by_scorer[name] = by_scorer.get(name, 0) + 1
    print("  by scorer: " + ", ".join(f"{name} {count:,}" for name, count in sorted(by_scorer.items())))
    print(f"sidecar exit code: {code}; its log: {len(serve.lines)} lines, of which")
    for mark in FAILURE_MARKS:
        print(f"  with {mark!r}: {sum(1 for line in serve.lines if mark in line)}")
    if args.log is not None:
        args.log.write_text("".join(serve.lines))


if __name__ == "__main__":
    main()
