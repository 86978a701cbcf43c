"""Conversations: memory per open conversation, and conversations closed and scored per second.

Memory: `--conversations` open conversations of `--turns` turns each (a 60-word question and a
120-word answer per turn, two tool calls), measured with tracemalloc around the stage, against
the stage's own byte accounting (what its `max_bytes` limit counts).

Throughput: the same conversations closed (idle, on a fake clock) and scored by the three zero-LLM
conversation scorers (`turns`, `tool_error_rate`, `user_frustration`), each score emitted as an
evaluation span with a link per turn and an event through SDK providers (in-memory exporters),
and the metrics. The baseline, measured in the same run: scoring every turn's run with three
quick checks through the run-level outputs (what per-turn scoring costs for the same traffic).

    python bench/conversations.py [--conversations 5000] [--turns 6]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import tracemalloc

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers.conversation_turns import Turn, turn_of
from otel_scorers.conversations.scoring import bind_conversation, score_conversation
from otel_scorers.conversations.stage import ConversationSampler, ConversationStage, StageLimits
from otel_scorers.emission import standard_emission
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.model import AgentRun, ToolCall
from otel_scorers.pipeline.scoring_pipeline import score_run_now
from otel_scorers.scorers import checks
from otel_scorers.scorers.conversation import tool_error_rate, turns, user_frustration
from otel_scorers.selection.binding import bind

QUESTION = " ".join(f"word{n}" for n in range(60))
ANSWER = " ".join(f"answer{n}" for n in range(120))


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def runs(conversations: int, per: int) -> list[AgentRun]:
    out = []
    for c in range(conversations):
        for t in range(per):
            out.append(
                AgentRun(
                    trace_id=(c << 16) + t + 1,
                    span_id=(c << 16) + t + 1,
                    agent_name="bench-agent",
                    input=f"{QUESTION} {c} {t}",
                    output=f"{ANSWER} {c} {t}",
                    tool_calls=(ToolCall("search"), ToolCall("book", state="error" if t % 3 == 0 else "ok")),
                    start_ns=t,
                    end_ns=t + 1,
                    conversation_id=f"conversation-{c}",
                )
            )
    return out


def providers() -> tuple[TracerProvider, LoggerProvider, MeterProvider]:
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(InMemoryLogRecordExporter()))
    return tracer_provider, logger_provider, MeterProvider(metric_readers=[InMemoryMetricReader()])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=5000)
    parser.add_argument("--turns", type=int, default=6)
    args = parser.parse_args()
    all_runs = runs(args.conversations, args.turns)

    clock = Clock()
    limits = StageLimits(max_open=10 * args.conversations, max_bytes=1 << 40)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    stage = ConversationStage(limits, ConversationSampler(1.0), clock)
    turn_list: list[Turn] = []
    for run in all_runs:
        turn = turn_of(run)
        assert turn is not None
        turn_list.append(turn)
        stage.add(turn)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    # Objects made in the window (turns, tool summaries, the stage's structures); the texts are
    # the runs' own strings, shared here, so they are added at their size.
    held = sum(stat.size_diff for stat in after.compare_to(before, "filename")) - sys.getsizeof(turn_list)
    text = sum(sys.getsizeof(turn.input) + sys.getsizeof(turn.output) for turn in turn_list)
    per = (held + text) / args.conversations
    print(
        f"memory: {args.conversations} open conversations of {args.turns} turns (~1,100 characters of "
        f"text a turn): {per:,.0f} B per open conversation ({held / args.conversations:,.0f} B of "
        f"structures, {text / args.conversations:,.0f} B of text); the stage counts "
        f"{stage.bytes / args.conversations:,.0f} B against max_bytes"
    )

    tracer_provider, logger_provider, meter_provider = providers()
    metrics = PipelineMetrics(meter_provider)
    # The outputs through the SDK providers, as the run scores' (the same `Emission`).
    emission = standard_emission(metrics, tracer_provider=tracer_provider, logger_provider=logger_provider)
    bindings = [
        bind_conversation(turns()),
        bind_conversation(tool_error_rate()),
        bind_conversation(user_frustration()),
    ]
    clock.now = limits.idle_timeout_s + 1

    async def score_all() -> int:
        closed = stage.close_due()
        for conversation in closed:
            emission.emit_conversation(conversation, await score_conversation(bindings, conversation))
        return len(closed)

    started = time.perf_counter()
    closed = asyncio.run(score_all())
    elapsed = time.perf_counter() - started
    rate = closed / elapsed

    tracer_provider, logger_provider, meter_provider = providers()
    run_emission = standard_emission(
        PipelineMetrics(meter_provider), tracer_provider=tracer_provider, logger_provider=logger_provider
    )
    run_bindings = [
        bind(checks.no_tool_errors()),
        bind(checks.max_tool_calls(3)),
        bind(checks.includes("word1")),
    ]
    started = time.perf_counter()
    for run in all_runs:
        run_emission.emit(run, score_run_now(run_bindings, run))
    run_emission.flush()
    per_turn = time.perf_counter() - started
    print(
        f"throughput: {closed} conversations closed and scored by 3 scorers in {elapsed:.2f} s: "
        f"{rate:,.0f} conversations/s ({rate * args.turns:,.0f} turns/s); "
        f"3 quick checks on every turn's run instead: {len(all_runs) / per_turn:,.0f} runs/s; "
        f"per turn, conversation scoring costs {elapsed / per_turn:.2f}x per-run scoring"
    )


if __name__ == "__main__":
    main()
