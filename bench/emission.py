"""CPU that scoring adds to an agent's runs, against the runs' own telemetry, in the same run.

The agent's runs are 4 spans each (an `invoke_agent` span with its input and output messages,
and three `execute_tool` spans), exported with `BatchSpanProcessor` over OTLP/gRPC to a counting
sink in another process. Four variants, measured in alternating rounds (none, bare, scored-sdk,
scored, none, ...), each round with fresh providers:

    none     the same loop with OpenTelemetry's no-op tracer: what the agent's loop itself costs
    bare     the runs' own telemetry: SDK spans, BatchSpanProcessor, OTLP/gRPC export
    scored-sdk  bare plus `ScoringSpanProcessor` with six quick checks, its evaluation spans
             through the same tracer provider, `gen_ai.evaluation.result` events through a logger
             provider (BatchLogRecordProcessor) and metrics (PeriodicExportingMetricReader), all
             over OTLP/gRPC to the same sink
    scored   the same, evaluation spans and events sent by `OtlpScoreExport` (written as OTLP,
             sent by the SDK's OTLP/gRPC exporters) to the same sink

A round's figure is the agent process's CPU (every thread: the agent's, the exporters', the
scoring engine's, gRPC's) from its first run until everything is scored and exported, per run.
The runs' own telemetry cost is bare - none; what scoring adds is scored - bare; the ratio of the
two is the result (medians over rounds, and the median of the per-round ratios). The sink's counts
show that nothing was dropped.

CPU time is not instructions: on a machine whose cores are busy with other work a process's CPU
time per instruction grows, and more so for the scored variants, whose threads (the agent's, the
engine's, the exporters') run on both cores at once where the bare one mostly runs on one. The
ratio scatters accordingly (0.7 to 1.7 on a shared 2-core machine); the load average of each round
is printed, and the kernel's part of the CPU (system time) apart. `bench/instructions.py` counts
the same runs in instructions (`agent_run_bare`, `agent_run_scored`), which do not scatter.

    python bench/emission.py [--runs 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import multiprocessing
import os
import resource
import socket
import statistics
import time
from dataclasses import dataclass
from multiprocessing.sharedctypes import Synchronized
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from otel_scorers import ScoringSpanProcessor, bind, checks
from otel_scorers.otlp.score_export import OtlpScoreExport

SIX_CHECKS = [
    checks.no_tool_errors(),
    checks.called_tool("get_weather"),
    checks.max_tool_calls(3),
    bind(checks.includes("sunny"), name="says-sunny"),
    bind(checks.excludes("sorry"), name="no-apology"),
    bind(checks.matches(r"-?\d+°C"), name="temperature"),
]
USER = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "What's the weather in Paris?"}]}])
ANSWER = json.dumps(
    [{"role": "assistant", "parts": [{"type": "text", "content": "It is sunny in Paris, 21°C."}]}]
)
TOOLS = (
    ("get_weather", '{"city": "Paris"}', "Sunny, 21°C"),
    ("get_time", '{"city": "Paris"}', "14:05"),
    ("get_air_quality", '{"city": "Paris"}', "good"),
)
#: Large enough that no exporter queue drops anything in an unpaced round.
QUEUE = 1 << 17
VARIANTS = ("none", "bare", "scored-sdk", "scored")


# ---- the sink, in another process ---------------------------------------------------------------


def sink_main(port: int, counters: dict[str, Synchronized]) -> None:  # type: ignore[type-arg]
    asyncio.run(_sink(port, counters))


async def _sink(port: int, counters: dict[str, Synchronized]) -> None:  # type: ignore[type-arg]
    """Receives traces, logs and metrics over OTLP/gRPC, counts spans and log records, discards."""
    import grpc
    import grpc.aio
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    def count(key: str, amount: int) -> None:
        counter = counters[key]
        with counter.get_lock():
            counter.value += amount

    async def traces(body: bytes, context: Any) -> bytes:
        request = ExportTraceServiceRequest.FromString(body)
        count("spans", sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans))
        return b""

    async def logs(body: bytes, context: Any) -> bytes:
        request = ExportLogsServiceRequest.FromString(body)
        count("logs", sum(len(s.log_records) for r in request.resource_logs for s in r.scope_logs))
        return b""

    async def metrics(body: bytes, context: Any) -> bytes:
        ExportMetricsServiceRequest.FromString(body)
        count("metric_requests", 1)
        return b""

    server = grpc.aio.server(options=[("grpc.max_receive_message_length", -1), ("grpc.so_reuseport", 0)])
    for service, handler in (
        ("opentelemetry.proto.collector.trace.v1.TraceService", traces),
        ("opentelemetry.proto.collector.logs.v1.LogsService", logs),
        ("opentelemetry.proto.collector.metrics.v1.MetricsService", metrics),
    ):
        method = grpc.unary_unary_rpc_method_handler(handler)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, {"Export": method}),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_listening(port: int, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"the sink is not listening on {port}")


# ---- the agent ----------------------------------------------------------------------------------


def agent_runs(tracer: trace.Tracer, runs: int) -> None:
    for _ in range(runs):
        with tracer.start_as_current_span(
            "invoke_agent weather",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "weather",
                "gen_ai.input.messages": USER,
            },
        ) as run:
            for name, arguments, result in TOOLS:
                with tracer.start_as_current_span(
                    f"execute_tool {name}",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": name,
                        "gen_ai.tool.call.arguments": arguments,
                        "gen_ai.tool.call.result": result,
                    },
                ):
                    pass
            run.set_attribute("gen_ai.output.messages", ANSWER)


@dataclass
class Agent:
    """One round's providers: built fresh, flushed at the end of the round, shut down after."""

    tracer: trace.Tracer
    flush: Any
    shutdown: Any


def build_agent(variant: str, endpoint: str, schedule_delay_millis: int = 5000) -> Agent:
    """`schedule_delay_millis`: the batch processors' delay (the SDK's default, 5 s); the
    instruction gate sets an hour, so that only full batches and flushes send, at the same
    points in every run."""
    if variant == "none":
        return Agent(trace.NoOpTracer(), lambda: None, lambda: None)
    resource = Resource.create({"service.name": "weather-agent"})
    provider = TracerProvider(resource=resource)
    delay = schedule_delay_millis
    provider.add_span_processor(
        BatchSpanProcessor(
            OTLPSpanExporter(endpoint=endpoint, insecure=True),
            max_queue_size=QUEUE,
            schedule_delay_millis=delay,
        )
    )
    if variant == "bare":
        return Agent(provider.get_tracer("agent"), provider.force_flush, provider.shutdown)
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(
        BatchLogRecordProcessor(
            OTLPLogExporter(endpoint=endpoint, insecure=True),
            max_queue_size=QUEUE,
            schedule_delay_millis=delay,
        )
    )
    reader = PeriodicExportingMetricReader(
        OTLPMetricExporter(endpoint=endpoint, insecure=True), export_interval_millis=max(60_000, delay)
    )
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    # scored-sdk: through the SDK's providers whatever the environment names (`export=False`).
    export: OtlpScoreExport | bool = (
        OtlpScoreExport(endpoint, insecure=True, max_queue_size=QUEUE, schedule_delay_millis=delay)
        if variant == "scored"
        else False
    )
    scoring = ScoringSpanProcessor(
        SIX_CHECKS,
        tracer_provider=provider,
        logger_provider=logger_provider,
        meter_provider=meter_provider,
        export=export,
        max_queue_size=QUEUE,
    )
    provider.add_span_processor(scoring)

    def flush() -> None:
        scoring.force_flush(600_000)  # scored and emitted first, then everything exported
        provider.force_flush(600_000)
        logger_provider.force_flush(600_000)
        meter_provider.force_flush(600_000)

    def shutdown() -> None:
        provider.shutdown()
        logger_provider.shutdown()
        meter_provider.shutdown()

    return Agent(provider.get_tracer("agent"), flush, shutdown)


def measure(variant: str, endpoint: str, runs: int) -> tuple[float, float]:
    """CPU of this process per run, µs, from the first run until all is scored and exported; and
    the system (kernel) part of it."""
    agent = build_agent(variant, endpoint)
    agent_runs(agent.tracer, 50)  # warm up: connections, first-use imports, the engine's thread
    agent.flush()
    gc.collect()
    before = resource.getrusage(resource.RUSAGE_SELF)
    agent_runs(agent.tracer, runs)
    agent.flush()
    after = resource.getrusage(resource.RUSAGE_SELF)
    agent.shutdown()
    system = after.ru_stime - before.ru_stime
    return (after.ru_utime - before.ru_utime + system) / runs * 1e6, system / runs * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=2000, help="agent runs per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    context = multiprocessing.get_context("spawn")
    counters = {key: context.Value("q", 0) for key in ("spans", "logs", "metric_requests")}
    port = free_port()
    sink = context.Process(target=sink_main, args=(port, counters), daemon=True)
    sink.start()
    try:
        wait_listening(port)
        endpoint = f"127.0.0.1:{port}"
        rows: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
        kernel: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
        received: dict[str, list[tuple[int, int]]] = {variant: [] for variant in VARIANTS}
        loads: list[float] = []
        for _ in range(args.rounds):
            for variant in VARIANTS:
                spans, logs = counters["spans"].value, counters["logs"].value
                cpu, system = measure(variant, endpoint, args.runs)
                rows[variant].append(cpu)
                kernel[variant].append(system)
                received[variant].append((counters["spans"].value - spans, counters["logs"].value - logs))
            loads.append(os.getloadavg()[0])
    finally:
        sink.kill()
        sink.join(5)

    own = [bare - none for none, bare in zip(rows["none"], rows["bare"], strict=True)]
    print(
        f"CPU per agent run (µs), {args.rounds} alternating rounds of {args.runs} runs, sink in another process"
    )
    print(f"{'round':>6}" + "".join(f"{variant:>12}" for variant in VARIANTS) + f"{'own':>8}{'load':>7}")
    for index in range(args.rounds):
        cells = "".join(f"{rows[variant][index]:12.0f}" for variant in VARIANTS)
        print(f"{index + 1:>6}{cells}{own[index]:8.0f}{loads[index]:7.2f}")
    cells = "".join(f"{statistics.median(rows[variant]):12.0f}" for variant in VARIANTS)
    print(f"{'median':>6}{cells}{statistics.median(own):8.0f}")
    cells = "".join(f"{statistics.median(kernel[variant]):12.0f}" for variant in VARIANTS)
    print(f"{'system':>6}{cells}   (the kernel's part of the medians' CPU)")
    warmup = 50
    for variant in VARIANTS[1:]:
        scored = variant.startswith("scored")
        expected = ((args.runs + warmup) * (4 + 6 * scored), (args.runs + warmup) * 6 * scored)
        counts = ", ".join(f"{spans}/{logs}" for spans, logs in received[variant])
        print(
            f"sink got, {variant} (spans/log records a round, expected {expected[0]}/{expected[1]}): {counts}"
        )
    print()
    for variant, how in (("scored-sdk", "through SDK providers"), ("scored", "with OtlpScoreExport")):
        added = [scored - bare for bare, scored in zip(rows["bare"], rows[variant], strict=True)]
        ratios = [a / o for a, o in zip(added, own, strict=True)]
        print(
            f"scoring {how}: adds {statistics.median(added):.0f} µs a run,"
            f" {statistics.median(ratios):.2f}x the runs' own telemetry CPU (median of per-round ratios;"
            f" range {min(ratios):.2f} to {max(ratios):.2f})"
        )
    one, five, _ = os.getloadavg()
    print(f"cores: {os.cpu_count()}, load average at the end: {one:.2f} (5 min {five:.2f})")


if __name__ == "__main__":
    main()
