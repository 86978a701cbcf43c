"""What the agent's thread pays per span with ScoringSpanProcessor attached, against a no-op
processor in the same run.

Two workloads, each measured in alternating rounds (baseline, candidate, baseline, ...) and
reported as medians:

- spans outside runs: a web request with a database child, no agent run anywhere;
- spans inside sampled runs: an agent run (invoke_agent, chat, execute_tool, chat) with the
  GenAI message attributes, every run sampled and scored by all eleven quick checks.

For runs, what the agent's thread pays is everything the processor does on it (buffering span
references, spotting the run, building the job) with the final hand-off to the scoring queue
replaced by a no-op: an unpaced loop makes runs about fifty times faster than they can be scored,
and the growing backlog (heap growth, collector passes) would otherwise be measured instead of
the hooks. The scoring itself is then measured on its own (background CPU per run) and live, in a
paced workload (1 ms of simulated model latency per chat) where it runs in the agent's idle time.

The paced figure is the wall time from the first run until the last one is scored, against the
same runs with a no-op processor: what an agent's runs take with live scoring beside them. It
includes the final drain (the last run scored and the providers flushed, once a round), printed
apart: one run's scoring over a round of 125 runs, about 1 % of the figure on a loaded machine,
so the ratio is what every run pays. What scoring can add to a run is the time the agent's
thread, woken from its model call, waits for the GIL while the engine scores (the engine gives
it up after each fifth of a millisecond of work) or for a core the engine's thread is using: on a
machine whose cores are busy with other work the engine's CPU per run grows several times and
the ratio with it. The load average is printed with every figure for that reason.

With the paced figure come the stretches of the engine's work between two safe points (where it
may give the GIL to the agent's thread, `HostYield`): the engine thread's CPU time from one safe
point to the next, median, 90th and 99th percentiles over the rounds. `--paced-export otlp`
sends the paced workload's evaluation spans and events as OTLP (`OtlpScoreExport`, to a sink in
another process) where the default sends them through the SDK's providers; `--paced-only` runs
that workload alone.

    python bench/hot_path.py [--spans 20000] [--rounds 5] [--paced-only] [--paced-export otlp]
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

from otel_scorers import ScoringSpanProcessor, checks
from otel_scorers.otlp.score_export import OtlpScoreExport
from otel_scorers.pipeline import scoring_pipeline

ELEVEN_CHECKS = [
    checks.includes("sunny"),
    checks.excludes("sorry"),
    checks.equals("It is sunny."),
    checks.matches(r"\d+°C"),
    checks.similarity("It is sunny in Paris"),
    checks.called_tool("get_weather"),
    checks.did_not_call("delete_user"),
    checks.tool_order(["get_weather"]),
    checks.max_tool_calls(3),
    checks.used_no_tools(),
    checks.no_tool_errors(),
]
USER = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "What's the weather in Paris?"}]}])
CALL = json.dumps(
    [
        {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}
            ],
        }
    ]
)
ANSWER = json.dumps(
    [{"role": "assistant", "parts": [{"type": "text", "content": "It is sunny in Paris, 21°C."}]}]
)


class NoOpProcessor(SpanProcessor):
    pass


def providers(
    processor_factory: Callable[[TracerProvider], SpanProcessor],
) -> tuple[TracerProvider, SpanProcessor]:
    provider = TracerProvider()
    processor = processor_factory(provider)
    provider.add_span_processor(processor)
    return provider, processor


def scoring(provider: TracerProvider, export_endpoint: str | None = None) -> ScoringSpanProcessor:
    # Evaluation spans go to this provider; events and metrics to SDK providers with no exporter.
    # With `export_endpoint`, the evaluation spans and events go there as OTLP.
    export = OtlpScoreExport(export_endpoint, insecure=True) if export_endpoint else False
    return ScoringSpanProcessor(
        ELEVEN_CHECKS,
        tracer_provider=provider,
        meter_provider=MeterProvider(),
        logger_provider=LoggerProvider(),
        max_queue_size=100_000,
        export=export,
    )


#: The engine thread's CPU time (s) between two consecutive safe points, every processor's made
#: while `StretchYield` stands for `HostYield`.
STRETCHES: list[float] = []


class StretchYield(scoring_pipeline.HostYield):
    """`HostYield`, noting the engine thread's CPU time since its previous safe point."""

    def __init__(self) -> None:
        super().__init__()
        self._last: float | None = None

    def __call__(self) -> None:
        now = time.thread_time()
        if self._last is not None:
            STRETCHES.append(now - self._last)
        super().__call__()
        self._last = time.thread_time()  # a release's own system call is not the engine's work


def stretch_percentiles() -> tuple[float, float, float]:
    """Median, 90th and 99th percentiles of `STRETCHES`, µs."""
    ordered = sorted(STRETCHES)
    at = lambda share: ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1e6  # noqa: E731
    return at(0.5), at(0.9), at(0.99)


def hooks_only(provider: TracerProvider) -> ScoringSpanProcessor:
    processor = scoring(provider)
    processor.engine.submit = lambda job: True  # type: ignore[method-assign]
    return processor


def outside_runs(provider: TracerProvider, spans: int) -> None:
    tracer = provider.get_tracer("web")
    for _ in range(spans // 2):
        with (
            tracer.start_as_current_span(
                "GET /weather", attributes={"http.request.method": "GET", "url.path": "/weather"}
            ),
            tracer.start_as_current_span("SELECT forecasts", attributes={"db.system.name": "postgresql"}),
        ):
            pass


def inside_runs(provider: TracerProvider, spans: int, model_latency_s: float = 0.0) -> None:
    tracer = provider.get_tracer("agent")
    for _ in range(spans // 4):
        with tracer.start_as_current_span(
            "invoke_agent weather",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather"},
        ) as run:
            run.set_attribute("gen_ai.input.messages", USER)
            with tracer.start_as_current_span(
                "chat m",
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.input.messages": USER,
                    "gen_ai.output.messages": CALL,
                },
            ):
                if model_latency_s:
                    time.sleep(model_latency_s)
            with tracer.start_as_current_span(
                "execute_tool get_weather",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "get_weather",
                    "gen_ai.tool.call.id": "c1",
                    "gen_ai.tool.call.arguments": '{"city": "Paris"}',
                    "gen_ai.tool.call.result": "Sunny, 21°C",
                },
            ):
                pass
            with tracer.start_as_current_span(
                "chat m",
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.input.messages": USER,
                    "gen_ai.output.messages": ANSWER,
                },
            ):
                if model_latency_s:
                    time.sleep(model_latency_s)
            run.set_attribute("gen_ai.output.messages", ANSWER)


def measure(
    workload: Callable[[TracerProvider, int], None],
    factory: Callable[[TracerProvider], SpanProcessor],
    spans: int,
) -> dict[str, float]:
    provider, processor = providers(factory)
    workload(provider, 200)  # warm up: first-use imports, the engine's thread
    processor.force_flush()
    gc.collect()
    gc.disable()  # as timeit does: collector passes land at random in one side or the other
    try:
        wall_start, cpu_start = time.perf_counter(), time.thread_time()
        workload(provider, spans)
        agent_cpu = time.thread_time() - cpu_start
        agent_wall = time.perf_counter() - wall_start
    finally:
        gc.enable()
    drain_start = time.perf_counter()
    processor.force_flush(600_000)
    drain = time.perf_counter() - drain_start
    total_wall = time.perf_counter() - wall_start
    processor.shutdown()
    provider.shutdown()
    return {
        "agent_cpu_us": agent_cpu / spans * 1e6,
        "agent_wall_us": agent_wall / spans * 1e6,
        "total_wall_us": total_wall / spans * 1e6,
        "drain_us": drain / spans * 1e6,
    }


def compare(
    name: str,
    workload: Callable[[TracerProvider, int], None],
    spans: int,
    rounds: int,
    candidate: Callable[[TracerProvider], SpanProcessor] = scoring,
) -> dict[str, Any]:
    """Alternating rounds (baseline, candidate, ...): the medians of each side, and the median of
    the per-round ratios, which cancels what the machine did to both sides of a round."""
    base: list[dict[str, float]] = []
    cand: list[dict[str, float]] = []
    for _ in range(rounds):
        base.append(measure(workload, lambda provider: NoOpProcessor(), spans))
        cand.append(measure(workload, candidate, spans))
    result: dict[str, Any] = {"workload": name}
    for key in ("agent_wall_us", "agent_cpu_us", "total_wall_us", "drain_us"):
        ratios = [c[key] / b[key] for b, c in zip(base, cand, strict=True) if b[key]]
        result[key] = (
            statistics.median(row[key] for row in base),
            statistics.median(row[key] for row in cand),
            statistics.median(ratios) if ratios else float("nan"),
        )
    return result


def background_cost_per_run(spans: int) -> float:
    """CPU the process spends per run outside the agent's thread (the engine's build, 11 checks
    and emission, and the providers' threads): the process's CPU time less the agent thread's,
    from the first run until the last is scored. Not the wall time of draining a backlog: the
    engine gives the GIL to the agent's thread while it produces runs, so how much is left to
    drain at the end says how the two shared the GIL, not what a run costs."""
    provider, processor = providers(scoring)
    inside_runs(provider, 200)
    processor.force_flush()
    process_start, agent_start = time.process_time(), time.thread_time()
    inside_runs(provider, spans)
    processor.force_flush(600_000)
    background = (time.process_time() - process_start) - (time.thread_time() - agent_start)
    processor.shutdown()
    return background / (spans // 4) * 1e6


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (5 min {five:.2f}) on {os.cpu_count()} cores"


def paced_workload(args: argparse.Namespace) -> float:
    """The paced workload's rounds, printed with the engine's stretches; its ratio."""
    paced_spans = max(400, args.spans // 20)
    sink = None
    candidate: Callable[[TracerProvider], SpanProcessor] = scoring
    if args.paced_export == "otlp":
        from emission import free_port, sink_main, wait_listening

        context = multiprocessing.get_context("spawn")
        counters = {key: context.Value("q", 0) for key in ("spans", "logs", "metric_requests")}
        port = free_port()
        sink = context.Process(target=sink_main, args=(port, counters), daemon=True)
        sink.start()
        wait_listening(port)
        candidate = lambda provider: scoring(provider, f"127.0.0.1:{port}")  # noqa: E731
    scoring_pipeline.HostYield = StretchYield  # type: ignore[misc,assignment]
    STRETCHES.clear()
    try:
        paced = compare(
            "paced",
            lambda provider, spans: inside_runs(provider, spans, model_latency_s=0.001),
            paced_spans,
            args.rounds,
            candidate,
        )
    finally:
        if sink is not None:
            sink.kill()
            sink.join(5)
    base, cand, ratio = paced["total_wall_us"]
    print(
        f"runs with 1 ms of model latency per chat, scoring live ({paced_spans} spans, {args.rounds} rounds,"
        f" scores sent {'as OTLP' if args.paced_export == 'otlp' else 'through the SDK'}), wall incl. scoring:"
        f" {_load()}"
    )
    print(f"  {base:8.2f} {cand:8.2f}   ratio {ratio:.3f}")
    drain = paced["drain_us"][1] * paced_spans / 1000
    print(f"  of which the final drain (last run scored, providers flushed): {drain:.2f} ms a round")
    median, p90, p99 = stretch_percentiles()
    print(
        f"  the engine's work between two safe points (thread CPU, {len(STRETCHES)} stretches):"
        f" median {median:.0f} µs, 90th percentile {p90:.0f} µs, 99th {p99:.0f} µs"
    )
    return float(ratio)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spans", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--paced-only", action="store_true", help="the paced workload alone")
    parser.add_argument(
        "--paced-export",
        choices=("sdk", "otlp"),
        default="sdk",
        help="how the paced workload's scores are sent",
    )
    args = parser.parse_args()
    if args.paced_only:
        paced_workload(args)
        return

    print(f"per-span cost, medians of {args.rounds} alternating rounds of {args.spans} spans; {_load()}")
    print("(µs per span: no-op processor / ScoringSpanProcessor / ratio)")
    outside = compare("spans outside runs", outside_runs, args.spans, args.rounds)
    outside["load"] = _load()
    inside = compare("spans inside sampled runs (hooks)", inside_runs, args.spans, args.rounds, hooks_only)
    inside["load"] = _load()
    for row in (outside, inside):
        print(f"\n{row['workload']} (at the end: {row['load']}):")
        for key, label in (("agent_wall_us", "agent thread, wall"), ("agent_cpu_us", "agent thread, CPU")):
            base, cand, ratio = row[key]
            print(f"  {label:<20} {base:8.2f} {cand:8.2f}   ratio {ratio:.3f}")
    background = background_cost_per_run(args.spans // 4)
    print(
        f"\nscoring per run, CPU outside the agent's thread (build, 11 checks, 11 scores emitted): {background:.0f} µs"
        f" ({_load()})"
    )

    ratio = paced_workload(args)
    print("\nsummary:")
    print(
        f"  spans outside runs, agent thread:        ratio {outside['agent_wall_us'][2]:.3f} (goal <= 1.05)"
    )
    print(f"  spans inside sampled runs, agent thread: ratio {inside['agent_wall_us'][2]:.3f} (goal <= 1.20)")
    print(f"  paced runs with live scoring, wall:      ratio {ratio:.3f}")


if __name__ == "__main__":
    main()
