"""Spans per second the sidecar ingests over OTLP/gRPC, side by side with rotel in the same run.

Every phase gets the same load: pre-encoded realistic agent traces (the example agent's runs with
their messages, tool calls and results), 500 spans a request, several requests in flight, from a
load process that retries refused requests as a collector would, so only acknowledged spans
count; spans a partial success refuses (OTLP's `rejected_spans`, which a collector does not retry)
are not counted either. Trace ids are rewritten per request, so every request carries new traces.

    rotel, discarding          the baseline: a Rust collector receiving and dropping
    rotel, forwarding          rotel sending everything on to a counting sink: acknowledged vs delivered
    sidecar tap                `otel-scorers serve` with six quick checks, at several sampling rates
    sidecar inline             forwarding every span to the sink, run spans held until scored

"2nd half" is the acknowledged rate over the second half of a phase, once the sidecar's buffers
have filled: the sustained rate, which the ratios use. Runs scored per second come from the
sidecar's own `otel_scorers_runs_total` on /metrics (scored within the phase).

Peak RSS is each server's VmHWM, its child processes' included (the sidecar's scoring process,
multiprocessing's resource tracker). Numbers depend on the machine (the load generator,
the sink and the server share its cores); the ratios are the result.

    python bench/sidecar.py [--seconds 6] [--in-flight 8] [--rates 0,0.01,0.1,1] [--inline-rates 0,0.01]
                            [--scoring-processes 1,2]   (the phases at sampling 1, per process count)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from typing import Any

import yaml

SPANS_PER_REQUEST = 500
TEMPLATES = 40
EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
CHECKS = [
    {"type": "no_tool_errors"},
    {"type": "called_tool", "args": {"tool": "get_weather"}},
    {"type": "max_tool_calls", "args": {"max": 3}},
    {"type": "includes", "name": "says-sunny", "args": {"expected": "sunny"}},
    {"type": "excludes", "name": "no-apology", "args": {"unwanted": "sorry"}},
    {"type": "matches", "name": "temperature", "args": {"pattern": "-?\\d+°C"}},
]


# ---- the load ----------------------------------------------------------------------------------


def build_templates() -> list[tuple[bytes, list[int]]]:
    """Requests of 500 spans of whole agent traces, each with the offsets of its trace ids."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from otel_scorers.demos.example_agent import DEMO_RUNS, ExampleAgent

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-service"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent = ExampleAgent(tracer=provider.get_tracer("example-agent"))
    templates: list[tuple[bytes, list[int]]] = []
    index = 0
    while len(templates) < TEMPLATES:
        exporter.clear()
        while len(exporter.get_finished_spans()) < SPANS_PER_REQUEST:
            agent.run(DEMO_RUNS[index % len(DEMO_RUNS)])
            index += 1
        spans = list(exporter.get_finished_spans())
        # Whole traces only: cut after the last run span that fits.
        cut = max(i for i, span in enumerate(spans[:SPANS_PER_REQUEST]) if span.parent is None) + 1
        body = encode_spans(spans[:cut]).SerializeToString()
        trace_ids = {span.context.trace_id.to_bytes(16, "big") for span in spans[:cut]}
        offsets = []
        for trace_id in trace_ids:
            marker = b"\x0a\x10" + trace_id  # field 1 (trace_id), length 16
            start = body.find(marker)
            while start != -1:
                offsets.append(start + 2)
                start = body.find(marker, start + 1)
        templates.append((body, offsets))
    provider.shutdown()
    return templates


def spans_in(templates: Sequence[tuple[bytes, list[int]]]) -> tuple[list[int], float]:
    """Spans in each template, and spans per trace over all of them."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    counts = []
    traces = 0
    for body, _ in templates:
        request = ExportTraceServiceRequest.FromString(body)
        spans = [span for r in request.resource_spans for s in r.scope_spans for span in s.spans]
        counts.append(len(spans))
        traces += len({span.trace_id for span in spans})
    return counts, sum(counts) / traces


def load_main(port: int, seconds: float, in_flight: int, results: Any) -> None:
    templates = build_templates()
    counts, spans_per_trace = spans_in(templates)
    cpu_before = time.process_time()
    outcome = asyncio.run(_load(port, templates, counts, seconds, in_flight))
    outcome["cpu_s"] = time.process_time() - cpu_before
    outcome["spans_per_trace"] = spans_per_trace
    results.put(outcome)


async def _load(
    port: int, templates: list[tuple[bytes, list[int]]], counts: list[int], seconds: float, in_flight: int
) -> dict[str, float]:
    import grpc
    import grpc.aio
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", -1)])
    export = channel.unary_unary(EXPORT)
    sequence = 0
    acked = 0
    refused = 0
    partially_refused = 0
    started = time.perf_counter()
    deadline = started + seconds
    halfway = started + seconds / 2
    acked_at_halfway: int | None = None

    async def worker() -> None:
        nonlocal sequence, acked, refused, partially_refused, acked_at_halfway
        while time.perf_counter() < deadline:
            sequence += 1
            template, offsets = templates[sequence % len(templates)]
            body = bytearray(template)
            prefix = sequence.to_bytes(8, "big")  # new trace ids; the sampled low bits are kept
            for offset in offsets:
                body[offset : offset + 8] = prefix
            payload = bytes(body)
            while time.perf_counter() < deadline:
                try:
                    answer = await export(payload, timeout=30)
                    if acked_at_halfway is None and time.perf_counter() >= halfway:
                        acked_at_halfway = acked
                    # A partial success acknowledges the request but refuses some of its spans
                    # (not retried, as a collector does not): only the rest count.
                    rejected = ExportTraceServiceResponse.FromString(answer).partial_success.rejected_spans
                    acked += counts[sequence % len(templates)] - rejected
                    partially_refused += rejected
                    break
                except grpc.aio.AioRpcError as error:
                    if error.code() not in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE):
                        raise
                    refused += 1
                    await asyncio.sleep(0.05)

    await asyncio.gather(*(worker() for _ in range(in_flight)))
    elapsed = time.perf_counter() - started
    await channel.close()
    second_half = (acked - (acked_at_halfway or 0)) / max(1e-9, elapsed - seconds / 2)
    return {
        "acked": acked,
        "refused": refused,
        "partially_refused": partially_refused,
        "seconds": elapsed,
        "second_half": second_half,
    }


# ---- a counting sink ----------------------------------------------------------------------------


def sink_main(ports: tuple[int, int], spans: Synchronized, scores: Synchronized) -> None:  # type: ignore[type-arg]
    asyncio.run(_sink(ports, (spans, scores)))


async def _sink(ports: tuple[int, int], counters: tuple[Synchronized, Synchronized]) -> None:  # type: ignore[type-arg]
    """Two counting receivers: one for forwarded spans, one for the scores the sidecar exports."""
    import grpc
    import grpc.aio
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    def traces_into(counter: Synchronized) -> Any:  # type: ignore[type-arg]
        async def traces(body: bytes, context: Any) -> bytes:
            request = ExportTraceServiceRequest.FromString(body)
            count = sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans)
            with counter.get_lock():
                counter.value += count
            return b""

        return traces

    async def other(body: bytes, context: Any) -> bytes:
        return b""

    servers = []
    for port, counter in zip(ports, counters, strict=True):
        server = grpc.aio.server(options=[("grpc.max_receive_message_length", -1), ("grpc.so_reuseport", 0)])
        for service, handler in (
            ("opentelemetry.proto.collector.trace.v1.TraceService", traces_into(counter)),
            ("opentelemetry.proto.collector.logs.v1.LogsService", other),
            ("opentelemetry.proto.collector.metrics.v1.MetricsService", other),
        ):
            method = grpc.unary_unary_rpc_method_handler(handler)
            server.add_generic_rpc_handlers(
                (grpc.method_handlers_generic_handler(service, {"Export": method}),)
            )
        server.add_insecure_port(f"127.0.0.1:{port}")
        await server.start()
        servers.append(server)
    await servers[0].wait_for_termination()


# ---- servers under test -------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_listening(port: int, process: subprocess.Popen[bytes], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        time.sleep(0.05)
    raise RuntimeError(f"nothing listening on {port}")


def family(pid: int) -> list[int]:
    """The process and its live descendants (the sidecar's scoring processes, say)."""
    pids = [pid]
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):  # a thread or child exited in between
            for child in (task / "children").read_text().split():
                pids.extend(family(int(child)))
    return pids


def peak_rss_mb(pid: int) -> float:
    """VmHWM of the process and its descendants, added up."""
    total = 0.0
    for member in family(pid):
        with contextlib.suppress(FileNotFoundError):  # exited in between
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1]) / 1024
    return total


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of the process and its live descendants, added up."""
    total = 0.0
    for member in family(pid):
        with contextlib.suppress(FileNotFoundError):  # exited in between
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    return total


def start_rotel(workdir: Path, port: int, sink_port: int | None) -> subprocess.Popen[bytes]:
    import rotel

    binary = Path(rotel.__file__).parent / "rotel-agent"
    exporter = (
        ["--exporter", "otlp", "--otlp-exporter-endpoint", f"http://127.0.0.1:{sink_port}"]
        if sink_port
        else ["--exporter", "blackhole"]
    )
    command = [
        str(binary),
        "start",
        "--otlp-grpc-endpoint",
        f"127.0.0.1:{port}",
        "--otlp-http-endpoint",
        f"127.0.0.1:{free_port()}",
        "--otlp-grpc-max-recv-msg-size-mib",
        "64",
        "--pid-file",
        str(workdir / "rotel.pid"),
        "--log-file",
        str(workdir / "rotel.log"),
        *exporter,
    ]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def start_sidecar(
    workdir: Path,
    port: int,
    sink_port: int,
    scores_port: int,
    mode: str,
    rate: float,
    http_port: int,
    processes: int = 1,
) -> subprocess.Popen[bytes]:
    sidecar: dict[str, Any] = {
        "mode": mode,
        "scoring_processes": processes,
        "grpc": {"port": port},
        "http": {"port": http_port},
        "export": {"endpoint": f"http://127.0.0.1:{scores_port}", "protocol": "grpc"},
    }
    if mode == "inline":
        sidecar["forward"] = {"endpoint": f"http://127.0.0.1:{sink_port}", "protocol": "grpc"}
    scorers = [{**check, "sampling": {"rate": rate}} for check in CHECKS]
    config = workdir / f"sidecar-{mode}.yaml"
    config.write_text(yaml.safe_dump({"scorers": scorers, "sidecar": sidecar}, allow_unicode=True))
    return subprocess.Popen(
        [sys.executable, "-m", "otel_scorers.cli", "serve", "-c", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@dataclass
class Result:
    name: str
    acked_per_s: float
    sustained_per_s: float
    delivered_per_s: float | None
    runs_per_s: float
    refused: int
    partially_refused: int
    peak_rss_mb: float
    #: CPU seconds per second of the phase: the server's processes, and the load generator's and sink's.
    server_cores: float
    load_and_sink_cores: float
    spans_per_trace: float


def runs_assembled(http_port: int | None) -> float:
    """The sidecar's own count of runs built and scored, from its Prometheus endpoint."""
    if http_port is None:
        return 0.0
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("otel_scorers_runs_total") and 'outcome="assembled"' in line
    )


def run_phase(
    name: str,
    server: subprocess.Popen[bytes],
    port: int,
    sink_spans: Synchronized,  # type: ignore[type-arg]
    sink_pid: int,
    seconds: float,
    in_flight: int,
    delivered: bool,
    http_port: int | None = None,
    settle_s: float = 0.0,
) -> Result:
    context = multiprocessing.get_context("spawn")
    try:
        wait_listening(port, server)
        results = context.Queue()
        before = sink_spans.value
        load = context.Process(target=load_main, args=(port, seconds, in_flight, results))
        load.start()
        server_cpu, sink_cpu = cpu_seconds(server.pid), cpu_seconds(sink_pid)
        outcome = results.get(timeout=seconds + 120)
        # From the load process's start: the server idles while the load builds its requests.
        server_cpu, sink_cpu = cpu_seconds(server.pid) - server_cpu, cpu_seconds(sink_pid) - sink_cpu
        load.join(30)
        time.sleep(settle_s)  # let what was acknowledged reach the sink
        sunk = sink_spans.value - before
        scored = runs_assembled(http_port)
        rss = peak_rss_mb(server.pid)
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(5)
    return Result(
        name,
        outcome["acked"] / outcome["seconds"],
        outcome["second_half"],
        sunk / (outcome["seconds"] + settle_s) if delivered else None,
        scored / outcome["seconds"],
        int(outcome["refused"]),
        int(outcome["partially_refused"]),
        rss,
        server_cpu / outcome["seconds"],
        (outcome["cpu_s"] + sink_cpu) / outcome["seconds"],
        outcome["spans_per_trace"],
    )


def rates(text: str) -> list[float]:
    return [float(part) for part in text.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument(
        "--rates",
        type=rates,
        default=[0.0, 0.01, 0.1, 1.0],
        help="sampling rates of the checks for the tap-mode phases (comma-separated)",
    )
    parser.add_argument("--inline-rates", type=rates, default=[0.0, 0.01], help="the same for inline mode")
    parser.add_argument(
        "--scoring-processes",
        type=lambda text: [int(part) for part in text.split(",")],
        default=[1],
        help="sidecar.scoring_processes for each tap-mode phase at sampling 1 (comma-separated)",
    )
    args = parser.parse_args()

    context = multiprocessing.get_context("spawn")
    sink_spans, sink_scores = context.Value("q", 0), context.Value("q", 0)
    sink_port, scores_port = free_port(), free_port()
    sink = context.Process(
        target=sink_main, args=((sink_port, scores_port), sink_spans, sink_scores), daemon=True
    )
    sink.start()
    results: list[Result] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            workdir = Path(tmp)
            phases: list[tuple[str, Any, bool, int | None]] = [
                ("rotel, discarding", lambda port, _: start_rotel(workdir, port, None), False, None),
                ("rotel, forwarding", lambda port, _: start_rotel(workdir, port, sink_port), True, None),
            ]
            runs = [("tap", rate, 1) for rate in args.rates if rate != 1]
            runs += [("tap", 1.0, processes) for processes in args.scoring_processes if 1.0 in args.rates]
            runs += [("inline", rate, 1) for rate in args.inline_rates]
            for mode, rate, processes in runs:
                suffix = f", {processes} scoring processes" if processes > 1 else ""
                phases.append(
                    (
                        f"sidecar {mode}, checks at rate {rate:g}{suffix}",
                        lambda port, http, mode=mode, rate=rate, processes=processes: start_sidecar(
                            workdir, port, sink_port, scores_port, mode, rate, http, processes
                        ),
                        mode == "inline",
                        free_port(),
                    )
                )
            for name, start, delivered, http_port in phases:
                port = free_port()
                server = start(port, http_port)
                results.append(
                    run_phase(
                        name,
                        server,
                        port,
                        sink_spans,
                        sink.pid or 0,
                        args.seconds,
                        args.in_flight,
                        delivered,
                        http_port,
                    )
                )
                print(f"  measured: {name}", file=sys.stderr, flush=True)
    finally:
        sink.kill()
        sink.join(5)

    baseline = results[0].sustained_per_s
    forwarding = results[1].delivered_per_s or 1.0
    print(
        f"\nOTLP/gRPC, {SPANS_PER_REQUEST} spans a request, {args.in_flight} in flight, {args.seconds:g} s a phase"
    )
    header = (
        f"{'phase':52} {'acked spans/s':>14} {'2nd half':>10} {'delivered/s':>12} {'x rotel discard':>16}"
    )
    print(
        f"{header} {'runs scored/s':>14} {'refusals':>9} {'spans refused':>14} {'peak RSS':>9}"
        f" {'server cores':>13} {'server µs/run':>14} {'load+sink cores':>16}"
    )
    for result in results:
        delivered = f"{result.delivered_per_s:12,.0f}" if result.delivered_per_s is not None else f"{'-':>12}"
        runs = result.runs_per_s
        per_run = f"{result.server_cores / runs * 1e6:14,.0f}" if runs else f"{'-':>14}"
        print(
            f"{result.name:52} {result.acked_per_s:14,.0f} {result.sustained_per_s:10,.0f} {delivered}"
            f" {result.sustained_per_s / baseline:16.2f}"
            f" {runs:14,.0f} {result.refused:9d} {result.partially_refused:14,d} {result.peak_rss_mb:7.0f}MB"
            f" {result.server_cores:13.2f} {per_run} {result.load_and_sink_cores:16.2f}"
        )
    print()
    # What 0.1 times rotel's discard rate leaves per run, for everything on the machine together.
    cores = os.cpu_count() or 1
    target_runs = 0.1 * baseline / results[0].spans_per_trace
    print(
        f"at 0.1 x rotel discarding ({0.1 * baseline:,.0f} spans/s, {target_runs:,.0f} traces/s of"
        f" {results[0].spans_per_trace:.1f} spans), {cores} cores allow {cores / target_runs * 1e6:,.0f} µs"
        " of CPU a trace for the server, the load generator and the sink together"
    )
    for result in results[2:]:
        if result.name.startswith("sidecar tap"):
            ratio = result.sustained_per_s / baseline
            processes = (
                int(result.name.split(", ")[-1].split()[0]) if "scoring processes" in result.name else 1
            )
            print(
                f"{result.name}: sustained / rotel discarding = {ratio:.2f};"
                f" runs scored/s per scoring process {result.runs_per_s / processes:,.0f}"
            )
        else:
            ratio = (result.delivered_per_s or 0) / forwarding
            print(f"{result.name}: delivered / rotel delivered = {ratio:.2f} (goal >= 1)")
    print(f"cores: {os.cpu_count()}, load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
