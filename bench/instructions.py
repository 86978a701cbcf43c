"""The performance gate: instructions per unit of fixed workloads, counted by valgrind's callgrind,
against a committed baseline (`bench/instructions-baseline.json`).

Wall time on a shared machine scatters by tens of percent from one run to the next; the number
of instructions a workload executes does not (callgrind counts them whatever else the machine
does). Each group of workloads runs in its own Python process under
`valgrind --tool=callgrind`; the process marks the start and the end of each measured region by
calling `os.getloadavg()` (callgrind's `--dump-before=os_getloadavg` writes the counts so far
at each call and starts again from zero), after a warm-up (first-use imports, connections, the
engine's thread). A region's instructions over its units (spans, runs, traces) are the figure;
interpreter start-up, imports and teardown are outside every region.

Workloads (all in-process work of a unit, every thread counted):

- `outside_runs`: a span outside any run (a web request with a database child) through
  `ScoringSpanProcessor` with the six checks, per span; `outside_runs_bare`: the same spans with
  a no-op processor;
- `agent_run_bare`: an agent run of 4 spans (`bench/emission.py`'s) exported by
  `BatchSpanProcessor` over OTLP/gRPC to a sink in another process, per run: the runs' own
  telemetry;
- `agent_run_scored`: the same run scored live by `ScoringSpanProcessor` with the six checks,
  evaluation spans and events written as OTLP (`OtlpScoreExport`) to the same sink, metrics
  recorded, per run (`agent_run_scored` - `agent_run_bare` is what scoring adds);
- `agent_run_sdk`: the same run scored the same way, evaluation spans and
  `gen_ai.evaluation.result` events made through the SDK's tracer and logger providers (the
  processor's output when it exports nothing itself, `export=False`) and sent by their batch
  processors over OTLP/gRPC to the same sink, metrics recorded, per run;
- `sidecar_trace`: a trace of the sidecar bench (the example agent's runs) through a scoring
  process's work: its batch message decoded, the run built, the six checks, the scores exported
  over OTLP/gRPC, the reply to the receiving process (`worker_process`'s jobs and replies, in
  tap mode), per trace; `sidecar_run_build`: finding those traces' runs alone (a run is
  read from its spans when first read, which nothing does there);
  `sidecar_emission`: emitting their runs' six scores alone (evaluation spans and events written
  and sent, metrics recorded), per run;
- `sidecar_request[1]`: one of the sidecar bench's 500-span requests (`bench/sidecar.py`, each
  trace's id fixed) through a receiving process's work, every trace sampled (a binding
  without `sampling`): read, its spans sorted out and screened (`request_scan`, `span_marks`), its traces
  written as batch messages for a scoring process (`trace_batches.encode_batch`), per request;
  `sidecar_request[0.01]`: the same at sampling 0.01 (the sidecar bench's rate, as
  `sidecar_inline_request`'s), the request read for its trace ids first;
- `build[<framework>]`: `build_runs` on every trace of one framework's fixtures
  (tests/fixtures/traces), each run read as the engine reads it, per span;
- `sidecar_inline_request` (not gated, `--only inline`): one of the sidecar bench's 500-span requests (`bench/sidecar.py`)
  through an inline sidecar's receiving process, the six checks at sampling 0.01, forwarded to
  the sink, per request: receiving, sorting out, forwarding, handing the sampled traces to the
  scoring process (another process, not counted) and sending their held run spans on, scored.

    python bench/instructions.py             # count, compare with the baseline: exit 1 on a regression
    python bench/instructions.py --update    # count, write the baseline (say why in the commit)
    python bench/instructions.py --only sidecar   # the groups named

A workload over the baseline by more than `--tolerance` (3 %) fails, named with both figures; a
gated workload absent from the baseline fails, named with the command that records it.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
BASELINE = BENCH / "instructions-baseline.json"
#: Callgrind writes its counts whenever this C function (`os.getloadavg`) is entered.
MARKER = "os_getloadavg"
TOLERANCE = 0.03
#: The groups the gate counts. `inline` is counted on demand only (`--only inline`): its count
#: depends on timing (which requests arrive while others are sent on and are merged, the
#: sidecar's timers), by up to about 15 % from one count to the next.
GATED = ("hot_path", "agent", "sidecar", "receive", "build")
GROUPS = (*GATED, "inline")


# ---- in the measured process ----------------------------------------------------------------------


class Regions:
    """Marks measured regions for callgrind and records their names and units, in order."""

    def __init__(self) -> None:
        self.measured: list[tuple[str, int]] = []
        self._instrumenting = False

    @contextmanager
    def region(self, name: str, units: int) -> Iterator[None]:
        if not self._instrumenting:
            # Started with --instr-atstart=no: the start-up and imports run at a fraction of
            # callgrind's cost, uncounted; counting starts here, before the first region.
            subprocess.run(
                ["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True
            )
            self._instrumenting = True
        gc.collect()
        os.getloadavg()  # the counts so far are dumped: the region starts from zero
        yield
        os.getloadavg()  # the region's counts are dumped
        self.measured.append((name, units))


def quiet_engine_timers() -> None:
    """The engine's timers (the in-process handoff expiry, counting the traces without a run,
    recording the metrics held back a moment after a burst of runs ends) set to an hour, as the
    batch processors' are: under callgrind a region lasts some fifty times its real time, and
    the idle loop's wake-ups (about 170,000 instructions a second of it) would be counted by
    how long the machine's load made the region last, not by its units; and where a burst ends
    is the engine catching up with the agent's thread, which the load decides, so the held
    metrics would be recorded in batches of whatever size it left. The roots are counted, and
    the metrics recorded, by the flush that ends a region instead (and the metrics by every
    full batch of runs), the same work the timers do. The engine's safe points give the GIL up
    each time, as under callgrind nearly all of them would (a fifth of a millisecond of real
    time is about four microseconds of work there), so that how many do is not left to the clock either."""
    from otel_scorers.inprocess import processor as inprocess
    from otel_scorers.pipeline import scoring_pipeline

    inprocess.HANDOFF_CHECK_INTERVAL_S = inprocess.RUNLESS_CHECK_INTERVAL_S = 3600
    scoring_pipeline._METRICS_FLUSH_DELAY_S = 3600
    scoring_pipeline._YIELD_EVERY_S = 0


def group_hot_path(regions: Regions, endpoint: str) -> None:
    from emission import SIX_CHECKS
    from hot_path import NoOpProcessor, outside_runs
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider

    from otel_scorers import ScoringSpanProcessor

    quiet_engine_timers()
    spans = 2000
    bare = TracerProvider()
    bare.add_span_processor(NoOpProcessor())
    outside_runs(bare, 400)
    with regions.region("outside_runs_bare", spans):
        outside_runs(bare, spans)
    provider = TracerProvider()
    processor = ScoringSpanProcessor(
        SIX_CHECKS, tracer_provider=provider, meter_provider=MeterProvider(), logger_provider=LoggerProvider()
    )
    provider.add_span_processor(processor)
    outside_runs(provider, 400)
    processor.force_flush()
    with regions.region("outside_runs", spans):
        outside_runs(provider, spans)
        processor.force_flush()
    processor.shutdown()


def group_agent(regions: Regions, endpoint: str) -> None:
    from emission import agent_runs, build_agent

    quiet_engine_timers()
    runs = 300
    for variant, name in (
        ("bare", "agent_run_bare"),
        ("scored", "agent_run_scored"),
        ("scored-sdk", "agent_run_sdk"),
    ):
        agent = build_agent(variant, endpoint, schedule_delay_millis=3_600_000)
        agent_runs(agent.tracer, 64)
        agent.flush()
        with regions.region(name, runs):
            agent_runs(agent.tracer, runs)
            agent.flush()
        agent.shutdown()


def group_sidecar(regions: Regions, endpoint: str) -> None:
    import pickle

    from sidecar import CHECKS

    from otel_scorers.config import parse_config
    from otel_scorers.metrics import PipelineMetrics
    from otel_scorers.otlp.telemetry import build_telemetry
    from otel_scorers.pipeline.scoring_pipeline import score_run_now
    from otel_scorers.sidecar.jobs import build_trace_runs, join_chains, sidecar_pipeline
    from otel_scorers.sidecar.trace_batches import decode_batch
    from otel_scorers.sidecar.worker_process import ReceivedTraceJob, Replies

    quiet_engine_timers()
    document = {
        "scorers": CHECKS,
        "sidecar": {
            "export": {
                "endpoint": f"http://{endpoint}",
                "protocol": "grpc",
                "batch_delay_s": 3600,
                "metric_interval_s": 3600,
            }
        },
    }
    config = parse_config(document)
    telemetry = build_telemetry(config.sidecar.export)
    metrics = PipelineMetrics(telemetry.meter_provider)
    built = sidecar_pipeline(config, telemetry, metrics)
    chains = join_chains(config.sidecar, metrics)
    done = threading.Semaphore(0)
    dropped: list[int] = []

    def send(message: tuple[Any, ...]) -> None:
        """The scoring process's `("done", [(job id, scores), ...])` reply, pickled as it sends
        it: in tap mode (the sidecar bench's), a scored trace's scores are an empty list."""
        pickle.dumps(message)
        finished = message[1]
        dropped.extend(job_id for job_id, scores in finished if scores is None)
        done.release(len(finished))

    # The scoring process's jobs and replies (`worker_process`), in tap mode.
    replies = Replies(send, attributes=False)

    def score(messages: list[bytes]) -> int:
        traces = 0
        for message in messages:
            _, jobs, payload, places = pickle.loads(message)
            received = decode_batch(jobs, payload, places)
            left = [len(received)]
            for job_id, spans in received:
                built.engine.submit(ReceivedTraceJob(job_id, spans, replies, left, built.runless, chains))
                traces += 1
        for _ in range(traces):
            done.acquire()
        if dropped:
            raise SystemExit(f"{len(dropped)} traces were dropped")
        built.force_flush(600)
        telemetry.scores.force_flush(600_000)
        return traces

    score(sidecar_messages(64, 64))
    messages = sidecar_messages(256, 128)
    traces = sum(len(pickle.loads(message)[1]) for message in messages)
    with regions.region("sidecar_trace", traces):
        score(messages)
    received = [spans for message in messages for _, spans in decode_batch(*pickle.loads(message)[1:])]
    with regions.region("sidecar_run_build", traces):
        for spans in received:
            build_trace_runs(spans)
    bindings = built.engine.bindings
    scored = [(run, score_run_now(bindings, run)) for spans in received for run in build_trace_runs(spans)]
    with regions.region("sidecar_emission", len(scored)):
        for run, scores in scored:
            built.emission.emit(run, scores)
        built.emission.flush()
        telemetry.scores.force_flush(600_000)
    built.shutdown(10)
    telemetry.shutdown(10)


def sidecar_messages(traces: int, per_message: int) -> list[bytes]:
    """The receiving process's `("jobs", jobs, payload, places)` messages for `traces` of the
    example agent's traces (the sidecar bench's), `per_message` a message: each request's spans
    sorted out as the receiving process sorts them (every trace sampled), its traces handed over
    as it hands them."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from otel_scorers.demos.example_agent import DEMO_RUNS, ExampleAgent
    from otel_scorers.sidecar.batch_assembler import BufferedTrace
    from otel_scorers.sidecar.request_scan import scan
    from otel_scorers.sidecar.trace_batches import encode_batch

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-service"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent = ExampleAgent(tracer=provider.get_tracer("example-agent"))
    messages = []
    for start in range(0, traces, per_message):
        exporter.clear()
        for index in range(start, min(traces, start + per_message)):
            agent.run(DEMO_RUNS[index % len(DEMO_RUNS)])
        request = encode_spans(list(exporter.get_finished_spans()))
        found = scan(request, request.ByteSize(), 0)
        ready = [
            BufferedTrace(trace_id, 0.0, 0.0, spans, found.runs.get(trace_id, []))
            for trace_id, spans in found.groups.items()
        ]
        messages.append(encode_batch(list(enumerate(ready))))
    provider.shutdown()
    return messages


#: The receiving process's workloads by their sampling rate: every trace (a binding without
#: `sampling`), and a hundredth (the sidecar bench's rate, as `sidecar_inline_request`'s).
RECEIVE_RATES = {"sidecar_request[1]": 1.0, "sidecar_request[0.01]": 0.01}


def group_receive(regions: Regions, endpoint: str) -> None:
    from otel_scorers.selection.sampling import threshold_for
    from otel_scorers.sidecar.request_scan import reads_trace_ids_first

    bodies = receive_requests(48)
    for name, rate in RECEIVE_RATES.items():
        threshold = threshold_for(rate)
        trace_ids_first = reads_trace_ids_first(threshold)
        for body in bodies[:8]:
            receive(body, threshold, trace_ids_first)
        with regions.region(name, len(bodies)):
            for body in bodies:
                receive(body, threshold, trace_ids_first)


def receive(body: bytes, threshold: int, trace_ids_first: bool) -> None:
    """A receiving process's work on one protobuf request, but for buffering its traces until
    they are ready: read (for its trace ids first below a rate of 1/8), its spans sorted out and
    screened, and its sampled traces written as batch messages for a scoring process, each trace
    as the assembler hands it over."""
    from otel_scorers.sidecar.batch_assembler import BufferedTrace
    from otel_scorers.sidecar.payload import decode_salvaging
    from otel_scorers.sidecar.request_scan import scan
    from otel_scorers.sidecar.trace_batches import MAX_BATCH_TRACES, encode_batch

    request, _, _ = decode_salvaging(body, "protobuf", trace_ids_first)
    found = scan(request, len(body), threshold)
    ready = []
    for trace_id, spans in found.groups.items():
        trace = BufferedTrace(trace_id, 0.0, 0.0, spans, found.runs.get(trace_id, []))
        kind = found.kinds.get(trace_id)
        if kind is not None:
            trace.kind = kind
            trace.named_runs = found.named_runs.get(trace_id, [])
        ready.append(trace)
    for start in range(0, len(ready), MAX_BATCH_TRACES):
        encode_batch(list(enumerate(ready[start : start + MAX_BATCH_TRACES], start)))


def receive_requests(count: int) -> list[bytes]:
    """`count` of the sidecar bench's 500-span requests (`bench/sidecar.py`), each trace's id
    made from its request's number and its own, so that the traces a rate samples, and so the
    count, are the same in every run."""
    import hashlib

    from sidecar import build_templates

    templates = build_templates()
    bodies = []
    for number in range(count):
        template, offsets = templates[number % len(templates)]
        body = bytearray(template)
        ids: dict[bytes, bytes] = {}
        for offset in sorted(offsets):  # numbered in the order they come
            old = bytes(body[offset : offset + 16])
            new = ids.get(old)
            if new is None:
                new = ids[old] = hashlib.sha256(f"{number}/{len(ids)}".encode()).digest()[:16]
            body[offset : offset + 16] = new
        bodies.append(bytes(body))
    return bodies


def group_build(regions: Regions, endpoint: str) -> None:
    from conventions import load

    from otel_scorers.runs.run_builder import build_runs

    def build(spans: list[Any]) -> None:
        for run in build_runs(spans):
            # A run is read from its spans when first read: read as the engine reads each run
            # it takes (what every check's skip decision and evaluation read).
            run.missing  # noqa: B018

    corpus = load()
    for traces in corpus.values():
        for spans in traces:
            build(spans)
    for framework, traces in corpus.items():
        with regions.region(f"build[{framework}]", sum(len(spans) for spans in traces)):
            for spans in traces:
                build(spans)


def group_inline(regions: Regions, endpoint: str) -> None:
    import asyncio
    import time

    from sidecar import CHECKS

    from otel_scorers.config import parse_config
    from otel_scorers.sidecar import Sidecar

    requests = 150
    forward = {"endpoint": f"http://{endpoint}", "protocol": "grpc"}
    export = {**forward, "batch_delay_s": 3600, "metric_interval_s": 3600}
    document = {
        "scorers": [{**check, "sampling": {"rate": 0.01}} for check in CHECKS],
        "sidecar": {
            "mode": "inline",
            "grpc": {"port": 0},
            "http": {"port": 0},
            "forward": forward,
            "export": export,
        },
    }
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()

    def on_loop(coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result(600)

    async def make() -> Sidecar:
        return Sidecar(parse_config(document))

    service = on_loop(make())
    on_loop(service.start())
    assert service.grpc is not None and service.held is not None
    held = service.held

    def settled() -> None:
        """Until every trace is scored and its held run spans sent on."""
        while service.assembler.buffered_traces or service.in_flight or len(held):
            time.sleep(0.05)
        on_loop(held.flush())

    context = multiprocessing.get_context("spawn")
    go, sent = context.Event(), context.Event()
    sender = context.Process(target=send_main, args=(service.grpc.port, 30, requests, go, sent), daemon=True)
    sender.start()
    sent.wait(600)
    settled()
    sent.clear()
    with regions.region("sidecar_inline_request", requests):
        go.set()
        sent.wait(1200)
        settled()
    sender.join(60)
    on_loop(service.stop())


def send_main(port: int, warm_up: int, requests: int, go: Any, sent: Any) -> None:
    """The load of `bench/sidecar.py` (its requests, new trace ids in each, 8 in flight), in a
    process of its own: `warm_up` requests, then `requests` more once `go` is set."""
    import asyncio

    import grpc.aio
    from sidecar import EXPORT, build_templates

    templates = build_templates()

    async def send(count: int, first: int) -> None:
        channel = grpc.aio.insecure_channel(
            f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", -1)]
        )
        export = channel.unary_unary(EXPORT)
        numbers = iter(range(first, first + count))

        async def worker() -> None:
            for sequence in numbers:
                template, offsets = templates[sequence % len(templates)]
                body = bytearray(template)
                for offset in offsets:  # new trace ids; the sampled low bits are kept
                    body[offset : offset + 8] = sequence.to_bytes(8, "big")
                await export(bytes(body), timeout=600)

        await asyncio.gather(*(worker() for _ in range(8)))
        await channel.close()

    asyncio.run(send(warm_up, 1))
    sent.set()
    go.wait()
    asyncio.run(send(requests, warm_up + 1))
    sent.set()


GROUP_FUNCTIONS: dict[str, Callable[[Regions, str], None]] = {
    "hot_path": group_hot_path,
    "agent": group_agent,
    "sidecar": group_sidecar,
    "receive": group_receive,
    "build": group_build,
    "inline": group_inline,
}


def run_group(group: str, endpoint: str, regions_file: Path) -> None:
    sys.path.insert(0, str(BENCH))  # the benches' workloads, imported as modules
    regions = Regions()
    GROUP_FUNCTIONS[group](regions, endpoint)
    regions_file.write_text(json.dumps(regions.measured))
    sys.stdout.flush()
    os._exit(0)  # teardown is not measured; nothing is left to send


# ---- the gate -------------------------------------------------------------------------------------


def count_group(group: str, endpoint: str, workdir: Path) -> dict[str, float]:
    """Instructions per unit of each of the group's workloads, from one callgrind run."""
    out = workdir / group
    out.mkdir()
    regions_file = out / "regions.json"
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--dump-before={MARKER}",
        f"--callgrind-out-file={out}/callgrind.%p",
        "--dump-line=no",
        "-q",
        sys.executable,
        str(Path(__file__).resolve()),
        "--run",
        group,
        "--endpoint",
        endpoint,
        "--regions-file",
        str(regions_file),
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0", "OTEL_SDK_DISABLED": "false"}
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0 or not regions_file.exists():
        raise SystemExit(f"workload group {group} failed ({result.returncode}):\n{result.stderr[-4000:]}")
    measured = json.loads(regions_file.read_text())
    parts = part_totals(out)
    # Part 1 is everything before the first mark; then each region, and what lies between two.
    if len(parts) < 2 * len(measured) + 1:
        raise SystemExit(f"workload group {group}: {len(parts)} callgrind dumps for {len(measured)} regions")
    return {name: parts[2 * index + 1] / units for index, (name, units) in enumerate(measured)}


def part_totals(directory: Path) -> list[int]:
    """The instruction totals of the main process's dumps, in order (`callgrind.<pid>.<part>`)."""
    files = sorted(directory.glob("callgrind.*"))
    main_pid = min(int(path.name.split(".")[1]) for path in files)
    totals: dict[int, int] = {}
    for path in files:
        name = path.name.split(".")
        if int(name[1]) != main_pid:
            continue
        part = int(name[2]) if len(name) > 2 else 1 << 30  # the dump at exit comes last
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("totals:") or line.startswith("summary:"):
                totals[part] = int(line.split()[1])
                break
    return [totals[part] for part in sorted(totals)]


def compare(
    counted: dict[str, float], baseline: dict[str, float], tolerance: float, groups: dict[str, str]
) -> list[str]:
    """A line per workload; the failures come back as the list returned. `groups`: the gated
    group of each gated workload counted; one of them absent from the baseline fails, saying how
    to record it (a workload that is never recorded would never be gated)."""
    failures = []
    print(f"{'workload':<40} {'baseline':>12} {'now':>12} {'ratio':>7}")
    for name, now in counted.items():
        before = baseline.get(name)
        if before is None:
            group = groups.get(name)
            print(f"{name:<40} {'-':>12} {now:12,.0f}    {'NOT IN THE BASELINE' if group else 'not gated'}")
            if group:
                failures.append(
                    f"{name}: {now:,.0f} instructions per unit, not in the baseline: record it with"
                    f" `python bench/instructions.py --only {group} --update` (saying why in the commit)"
                )
            continue
        ratio = now / before
        flag = ""
        if ratio > 1 + tolerance:
            flag = "  REGRESSION"
            failures.append(
                f"{name}: {now:,.0f} instructions per unit against {before:,.0f} in the baseline"
                f" ({ratio:.3f}x, more than {1 + tolerance:.2f}x)"
            )
        elif ratio < 1 - tolerance:
            flag = "  (fewer: update the baseline)"
        print(f"{name:<40} {before:12,.0f} {now:12,.0f} {ratio:7.3f}{flag}")
    return failures


@contextmanager
def sink() -> Iterator[str]:
    """The counting OTLP/gRPC sink of `bench/emission.py`, in another process (not counted)."""
    sys.path.insert(0, str(BENCH))
    from emission import free_port, sink_main, wait_listening

    context = multiprocessing.get_context("spawn")
    counters = {key: context.Value("q", 0) for key in ("spans", "logs", "metric_requests")}
    port = free_port()
    process = context.Process(target=sink_main, args=(port, counters), daemon=True)
    process.start()
    try:
        wait_listening(port)
        yield f"127.0.0.1:{port}"
    finally:
        process.kill()
        process.join(5)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--update", action="store_true", help="write the counts as the new baseline")
    parser.add_argument("--only", nargs="*", choices=GROUPS, help="count these groups only")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE)
    parser.add_argument("--jobs", type=int, default=2, help="groups counted at once")
    parser.add_argument("--baseline", type=Path, default=BASELINE)
    parser.add_argument("--run", choices=GROUPS, help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", help=argparse.SUPPRESS)
    parser.add_argument("--regions-file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        run_group(args.run, args.endpoint, args.regions_file)
        return
    groups = args.only or list(GATED)
    if args.update and not set(groups) <= set(GATED):
        parser.error("only the gated groups are recorded in the baseline: " + ", ".join(GATED))
    counted: dict[str, float] = {}
    gated: dict[str, str] = {}
    with (
        sink() as endpoint,
        tempfile.TemporaryDirectory(prefix="instructions-") as workdir,
        ThreadPoolExecutor(args.jobs) as pool,
    ):
        for group, result in zip(
            groups, pool.map(lambda group: count_group(group, endpoint, Path(workdir)), groups), strict=True
        ):
            counted.update(result)
            if group in GATED:
                gated.update(dict.fromkeys(result, group))
    baseline: dict[str, float] = json.loads(args.baseline.read_text()) if args.baseline.exists() else {}
    failures = compare(counted, baseline, args.tolerance, gated)
    plain, hooked = counted.get("outside_runs_bare"), counted.get("outside_runs")
    if plain and hooked:
        print(f"\na span outside runs: {hooked / plain:.3f}x its cost with a no-op processor")
    bare = counted.get("agent_run_bare")
    for name, how in (("agent_run_scored", "written as OTLP"), ("agent_run_sdk", "through the SDK")):
        scored = counted.get(name)
        if bare and scored:
            print(
                f"\nscoring {how} adds {scored - bare:,.0f} instructions a run:"
                f" {(scored - bare) / bare:.2f}x the run's own telemetry"
            )
    if args.update:
        kept = {name: value for name, value in baseline.items() if args.only and name not in counted}
        merged = {**kept, **{name: round(value) for name, value in counted.items()}}
        args.baseline.write_text(json.dumps(dict(sorted(merged.items())), indent=1) + "\n")
        print(f"\nwrote {args.baseline}")
        return
    if failures:
        print("\nthe gate fails:", *failures, sep="\n  ")
        sys.exit(1)


if __name__ == "__main__":
    main()
