"""Scoring in a child process, so that receiving and scoring each have a core of their own.

One Python process runs one thread at a time: a sidecar that receives and scores in the same
process gives its receivers whatever time scoring leaves them, and with the checks on, scoring
(building the runs, the checks, metric updates, writing the scores as OTLP) costs more than
receiving.
With `sidecar.scoring_process: true` (the default) the receiving process keeps the loop, the
receivers and trace assembly; a spawned child builds the runs, scores them and exports the
scores with its own OpenTelemetry SDK providers (same `export` settings, its own
`service.instance.id`).

Ready traces go to a child in batches: one OTLP request holding the spans of their runs'
subtrees, whatever the number of traces (a message per trace costs a pickle, a pipe write and
a wake-up of the child each, which at thousands of traces a second was most of the hand-over).
The score attributes of each run come back in batches too (inline mode attaches them to the held
run spans).
`sidecar.scoring_processes: N` starts N such children (each ready trace goes to the one with
the fewest traces in hand), for machines with the cores. `/metrics` serves every process's
metrics, merged. If a child dies, the traces it had are counted as dropped
(`otel_scorers.runs{outcome=dropped, reason=worker_exited}`) and a new child is started in its
place. The children exit when their parent does.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import multiprocessing
import os
import pickle
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from prometheus_client.exposition import generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector, CollectorRegistry

from otel_scorers.config import Config
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.model import AgentRun
from otel_scorers.pipeline import ScoredRun
from otel_scorers.sidecar.batch_assembler import BufferedTrace
from otel_scorers.sidecar.deadline import call_within
from otel_scorers.sidecar.hold import encode_spans
from otel_scorers.sidecar.jobs import (
    Done,
    RunScores,
    build_trace_runs,
    run_scores,
    run_subtrees,
    scoring_conversations,
    sidecar_engine,
)
from otel_scorers.sidecar.logs import setup_logging
from otel_scorers.sidecar.otlp_spans import Batch, Origin, OtlpSpan
from otel_scorers.throttled_log import throttled

logger = logging.getLogger("otel_scorers")

_RESTART_DELAY_S = 1.0
#: Traces at most in one message to a scoring process, and replies in one message back.
_MAX_BATCH_TRACES = 256
#: Longest a finished trace's reply waits for others to share its message.
_REPLY_WAIT_S = 0.02
_METRICS_TIMEOUT_S = 2.0


# ---- the receiving side ----------------------------------------------------------------------


@dataclass(eq=False)
class _Child:
    """One incarnation of a scoring process (slot `index`), with the traces it was given."""

    index: int
    process: multiprocessing.process.BaseProcess
    connection: Connection
    #: Ready traces (by job id) and messages for the child, in order; None ends the sending thread.
    outbox: queue.SimpleQueue[tuple[int, BufferedTrace] | bytes | None] = field(
        default_factory=queue.SimpleQueue
    )
    pending: dict[int, BufferedTrace] = field(default_factory=dict)
    alive: bool = True
    ready: threading.Event = field(default_factory=threading.Event)
    stopped: threading.Event = field(default_factory=threading.Event)


class ProcessScoring:
    """`Scoring` in `processes` child processes: each ready trace goes to the child with the
    fewest traces in hand, down a pipe (a sending thread per child, so the loop never blocks on
    it); results come back on a receiving thread per child, which also notices its exit and
    starts a new one in its place."""

    def __init__(
        self,
        config: Config,
        metrics: PipelineMetrics,
        done: Done,
        own_prometheus_text: Callable[[], bytes],
        processes: int = 1,
    ) -> None:
        if processes < 1:
            raise ValueError(f"processes must be at least 1, got {processes}")
        self._config = config
        self._metrics = metrics
        self._done = done
        self._own_prometheus_text = own_prometheus_text
        self._context = multiprocessing.get_context("spawn")  # never fork a process running gRPC
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._processes = processes
        self._children: list[_Child | None] = [None] * processes
        self._stopping = False
        self._metric_waiters: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[bytes]]] = {}

    async def start(self, timeout_s: float = 60.0) -> None:
        """Start the scoring processes and wait until each can score."""
        with self._lock:
            children = [self._spawn(index) for index in range(self._processes)]
            self._children = list(children)
        for child in children:
            if not await asyncio.to_thread(child.ready.wait, timeout_s):
                raise RuntimeError(f"the scoring process did not start within {timeout_s:g} s")
            if not child.alive:
                raise RuntimeError(
                    f"the scoring process exited while starting (code {child.process.exitcode})"
                )

    def _spawn(self, index: int) -> _Child:
        ours, theirs = self._context.Pipe()
        process = self._context.Process(
            target=worker_main, args=(self._config, theirs), name=f"otel-scorers-worker-{index}", daemon=True
        )
        process.start()
        theirs.close()
        child = _Child(index, process, ours)
        threading.Thread(
            target=self._send_forever, args=(child,), name="otel-scorers-send", daemon=True
        ).start()
        threading.Thread(
            target=self._receive_forever, args=(child,), name="otel-scorers-receive", daemon=True
        ).start()
        return child

    def _alive(self) -> list[_Child]:
        return [child for child in self._children if child is not None and child.alive]

    # ---- Scoring ---------------------------------------------------------------------------

    def submit(self, trace: BufferedTrace) -> None:
        # Encoded on the sending thread, with the traces queued behind it: the loop only queues.
        with self._lock:
            alive = self._alive()
            child = min(alive, key=lambda candidate: len(candidate.pending)) if alive else None
            if child is not None:
                job_id = next(self._ids)
                child.pending[job_id] = trace
                child.outbox.put((job_id, trace))
        if child is None:
            self._metrics.run_outcome("dropped", "worker_exited")
            self._done(trace, None)

    def shutdown(self, timeout_s: float, flush_s: float) -> None:
        """Let the children score what they have within `timeout_s` and flush their exports within
        `flush_s` more; a child still there after that is killed (what it had is counted)."""
        with self._lock:
            self._stopping = True
            children = [child for child in self._children if child is not None]
        stop = pickle.dumps(("stop", timeout_s, flush_s))
        for child in children:
            child.outbox.put(stop)
        # Each receiving thread joins its process when the pipe closes, then says so.
        deadline = time.monotonic() + timeout_s + flush_s + 0.1
        for child in children:
            if not child.stopped.wait(max(0.0, deadline - time.monotonic())):
                logger.warning("otel_scorers: a scoring process did not stop in time; killing it")
                child.process.kill()
                child.stopped.wait(1.0)

    async def prometheus_text(self) -> bytes:
        own = self._own_prometheus_text()
        loop = asyncio.get_running_loop()
        waiting: list[tuple[int, asyncio.Future[bytes]]] = []
        with self._lock:
            for child in self._alive():
                request = next(self._ids)
                future: asyncio.Future[bytes] = loop.create_future()
                self._metric_waiters[request] = (loop, future)
                child.outbox.put(pickle.dumps(("metrics", request)))
                waiting.append((request, future))
        texts = [own]
        try:
            done, late = await asyncio.wait([future for _, future in waiting], timeout=_METRICS_TIMEOUT_S)
            if late:
                throttled.warning(
                    "worker_metrics", "otel_scorers: a scoring process did not report its metrics in time"
                )
            texts.extend(future.result() for _, future in waiting if future in done)
        finally:
            for request, _ in waiting:
                self._metric_waiters.pop(request, None)
        return merge_prometheus_text(*texts) if len(texts) > 1 else own

    # ---- the pipe --------------------------------------------------------------------------

    def _send_forever(self, child: _Child) -> None:
        outbox = child.outbox
        while True:
            message = outbox.get()
            # Whatever queued up meanwhile goes in the same batch (a message other than a trace
            # goes after it, in order).
            traces: list[tuple[int, BufferedTrace]] = []
            after: list[bytes | None] = []
            while True:
                if isinstance(message, tuple):
                    traces.append(message)
                    if len(traces) >= _MAX_BATCH_TRACES:
                        break
                else:
                    after.append(message)
                    break
                try:
                    message = outbox.get_nowait()
                except queue.Empty:
                    break
            try:
                if traces:
                    child.connection.send_bytes(encode_batch(traces))
                for other in after:
                    if other is None:
                        return
                    child.connection.send_bytes(other)
            except (OSError, ValueError):
                return  # the child is gone: the receiving thread notices and cleans up

    def _receive_forever(self, child: _Child) -> None:
        while True:
            try:
                message = pickle.loads(child.connection.recv_bytes())
            except (EOFError, OSError):
                break
            kind = message[0]
            if kind == "ready":
                child.ready.set()
            elif kind == "done":
                with self._lock:
                    finished = [(child.pending.pop(job_id, None), scores) for job_id, scores in message[1]]
                for trace, scores in finished:
                    if trace is not None:
                        self._done(trace, scores)
            elif kind == "metrics":
                waiter = self._metric_waiters.get(message[1])
                if waiter is not None:
                    loop, future = waiter
                    loop.call_soon_threadsafe(_resolve, future, message[2])
        self._child_exited(child)

    def _child_exited(self, child: _Child) -> None:
        child.outbox.put(None)
        child.process.join(5.0)
        with self._lock:
            child.alive = False
            child.ready.set()  # wakes a start() waiting for it
            lost = list(child.pending.values())
            child.pending.clear()
            stopping = self._stopping
        for trace in lost:
            self._done(trace, None)
        if lost:
            self._metrics.run_outcome("dropped", "worker_exited", len(lost))
        if stopping:
            child.stopped.set()
            return
        logger.error(
            "otel_scorers: the scoring process exited (code %s) with %d traces; starting a new one",
            child.process.exitcode,
            len(lost),
        )
        time.sleep(_RESTART_DELAY_S)
        with self._lock:
            if not self._stopping:
                self._children[child.index] = self._spawn(child.index)
                return
        child.stopped.set()


def encode_batch(traces: Sequence[tuple[int, BufferedTrace]]) -> bytes:
    """Ready traces as one message: the job ids with their trace ids, and one OTLP request holding
    the spans of their runs' subtrees (a trace's spans are told apart by their trace id)."""
    jobs = [(job_id, trace.key) for job_id, trace in traces]
    payload = encode_spans(
        (item, {}) for _, trace in traces for item in run_subtrees(trace.spans, trace.run_spans)
    )
    return pickle.dumps(("jobs", jobs, payload), protocol=pickle.HIGHEST_PROTOCOL)


def _resolve(future: asyncio.Future[bytes], text: bytes) -> None:
    if not future.done():
        future.set_result(text)


class _Families(Collector):
    def __init__(self, families: Sequence[Metric]) -> None:
        self._families = families

    def collect(self) -> Sequence[Metric]:
        return self._families


def merge_prometheus_text(*texts: bytes) -> bytes:
    """One exposition of several processes' metrics: series of the same family and labels are
    added up (the processes count different things under the same names, e.g. runs dropped by
    the receiving side and runs assembled by the scoring side)."""
    families: dict[str, Metric] = {}
    values: dict[tuple[str, str, tuple[tuple[str, str], ...]], int] = {}
    for text in texts:
        for family in text_string_to_metric_families(text.decode()):
            merged = families.get(family.name)
            if merged is None:
                merged = families[family.name] = Metric(
                    family.name, family.documentation, family.type, family.unit
                )
            for sample in family.samples:
                key = (family.name, sample.name, tuple(sorted(sample.labels.items())))
                index = values.get(key)
                if index is None:
                    values[key] = len(merged.samples)
                    merged.samples.append(sample)
                else:
                    existing = merged.samples[index]
                    merged.samples[index] = existing._replace(value=existing.value + sample.value)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(list(families.values())))
    return generate_latest(registry)


# ---- the scoring process ---------------------------------------------------------------------


def decode_batch(payload: bytes) -> dict[bytes, list[OtlpSpan]]:
    """The spans of a batch's request, by trace id."""
    request = ExportTraceServiceRequest.FromString(payload)
    batch = Batch(0)
    traces: dict[bytes, list[OtlpSpan]] = {}
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            origin = Origin(resource_spans.resource, scope_spans.scope, scope_spans.schema_url, batch)
            for span in scope_spans.spans:
                spans = traces.get(span.trace_id)
                if spans is None:
                    spans = traces[span.trace_id] = []
                spans.append(OtlpSpan(span, origin))
    return traces


class _Replies:
    """Finished jobs, sent back in batches: when the last job of a received batch is done, when
    `_MAX_BATCH_TRACES` wait, and every `_REPLY_WAIT_S` (`flush`, on the engine's loop) for the
    rest (a trace waiting for a judge finishes after the others of its batch)."""

    def __init__(self, send: Callable[[tuple[Any, ...]], None]) -> None:
        self._send = send
        self._pending: list[tuple[int, list[RunScores] | None]] = []
        # The engine's thread adds; a job dropped as it is submitted or at shutdown, the main one.
        self._lock = threading.Lock()

    def add(self, job: _ReceivedTraceJob, scores: list[RunScores] | None) -> None:
        with self._lock:
            self._pending.append((job.job_id, scores))
            job.batch[0] -= 1
            due = job.batch[0] <= 0 or len(self._pending) >= _MAX_BATCH_TRACES
        if due:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
        if pending:
            self._send(("done", pending))


@dataclass(frozen=True, slots=True)
class _ReceivedTraceJob:
    job_id: int
    spans: list[OtlpSpan]
    replies: _Replies
    #: How many jobs of the batch this one came in are not done yet (shared by them).
    batch: list[int]

    def build(self) -> Sequence[AgentRun]:
        return build_trace_runs(self.spans)

    def finished(self, results: Sequence[ScoredRun]) -> None:
        self.replies.add(self, run_scores(results))

    def dropped(self, reason: str) -> None:
        self.replies.add(self, None)


class _Stop(Exception):
    """SIGTERM reached the scoring process itself (say, sent to the whole process group)."""


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise _Stop


def worker_main(config: Config, connection: Connection) -> None:
    """The scoring process: jobs in, score attributes out, scores exported over OTLP."""
    from otel_scorers.sidecar.telemetry import build_telemetry

    # The parent decides when this process stops (SIGINT reaches the whole process group); a
    # SIGTERM of its own stops it as the parent would, within `shutdown_timeout_s`.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    setup_logging("[scoring]")
    settings = config.sidecar
    telemetry = build_telemetry(settings.export)
    metrics = PipelineMetrics(telemetry.meter_provider)
    conversations = scoring_conversations(
        config.conversations.settings(config.judge) if config.conversations is not None else None,
        telemetry,
        metrics,
    )
    engine = sidecar_engine(
        config.bindings(), telemetry, metrics, settings.max_runs_in_flight, settings.console, conversations
    )
    sending = threading.Lock()

    def reply(message: tuple[Any, ...]) -> None:
        data = pickle.dumps(message)
        # The parent may be gone; the loop below then ends on EOF.
        with sending, contextlib.suppress(OSError, ValueError):
            connection.send_bytes(data)

    replies = _Replies(reply)
    engine.call_every(_REPLY_WAIT_S, replies.flush)
    reply(("ready",))
    flush_s = min(2.0, settings.shutdown_timeout_s / 4)
    timeout_s = settings.shutdown_timeout_s - flush_s  # unless the parent says otherwise
    try:
        while True:
            try:
                message = pickle.loads(connection.recv_bytes())
            except (EOFError, OSError):
                timeout_s = 2.0  # the parent disappeared without saying stop
                break
            kind = message[0]
            if kind == "jobs":
                traces = decode_batch(message[2])
                left = [len(message[1])]
                for job_id, trace_id in message[1]:
                    engine.submit(_ReceivedTraceJob(job_id, traces.get(trace_id, []), replies, left))
            elif kind == "metrics":
                reply(("metrics", message[1], telemetry.prometheus_text()))
            elif kind == "stop":
                timeout_s, flush_s = message[1], message[2]
                break
    except _Stop:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # stopping already
    deadline = time.monotonic() + timeout_s + flush_s
    if not call_within(lambda: engine.shutdown(timeout_s), timeout_s + 0.1, "scoring shutdown"):
        logger.warning("otel_scorers: scoring did not stop within %.1f s", timeout_s)
    if conversations is not None:
        closing_s = max(0.1, deadline - flush_s - time.monotonic())
        call_within(lambda: conversations.shutdown(closing_s), closing_s + 0.1, "conversations shutdown")
    replies.flush()
    telemetry.shutdown(max(0.1, deadline - time.monotonic()))
    connection.close()
    # Everything worth keeping is sent or counted; tearing the interpreter down (gRPC's and the
    # SDK's modules and threads) takes about half a second more, past the deadline.
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(0)


__all__ = ["ProcessScoring", "RunScores", "merge_prometheus_text", "worker_main"]
