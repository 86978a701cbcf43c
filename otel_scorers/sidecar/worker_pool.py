"""Scoring in a child process, so that receiving and scoring each have a core of their own.

One Python process runs one thread at a time: a sidecar that receives and scores in the same
process gives its receivers whatever time scoring leaves them, and with the checks on, scoring
(building the runs, the checks, metric updates, writing the scores as OTLP) costs more than
receiving.
With `sidecar.scoring_process: true` (the default) the receiving process keeps the loop, the
receivers and trace assembly; a spawned child builds the runs, scores them and exports the
scores with its own OpenTelemetry SDK providers (same `export` settings, its own
`service.instance.id`).

Ready traces go to a child in batches (`trace_batches`), and the score attributes of each run
come back in batches too (inline mode attaches them to the held run spans); with `labels:`, so
do the scores of the conversations a child scored, for the agreement join held here. The child
runs `worker_process.worker_main`.
`sidecar.scoring_processes: N` starts N such children (each ready trace goes to the one with
the fewest traces in hand), for machines with the cores. `/metrics` serves every process's
metrics, merged. If a child dies, the traces it had are counted as dropped
(`otel_scorers.runs{outcome=dropped, reason=worker_exited}`) and a new child is started in its
place. The children exit when their parent does.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import multiprocessing
import pickle
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

from otel_scorers.config import Config
from otel_scorers.labels.join_records import JudgeScore
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.sidecar.batch_assembler import BufferedTrace
from otel_scorers.sidecar.jobs import Done
from otel_scorers.sidecar.metrics_merge import merge_prometheus_text
from otel_scorers.sidecar.trace_batches import MAX_BATCH_TRACES, encode_batch
from otel_scorers.sidecar.worker_process import worker_main
from otel_scorers.throttled_log import throttled

logger = logging.getLogger("otel_scorers")

_RESTART_DELAY_S = 1.0
_METRICS_TIMEOUT_S = 2.0


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
    fewest traces in hand (a trace without a run span, to the first: see `submit`), down a pipe (a sending thread per child, so the loop never blocks on
    it); results come back on a receiving thread per child, which also notices its exit and
    starts a new one in its place."""

    def __init__(
        self,
        config: Config,
        metrics: PipelineMetrics,
        done: Done,
        own_prometheus_text: Callable[[], bytes],
        processes: int,
        judged: Callable[[list[JudgeScore]], None] | None = None,
    ) -> None:
        """`judged` hears the run and conversation scores the children made, for the agreement
        join (their `AgreementOutput`'s, carried here)."""
        if processes < 1:
            raise ValueError(f"processes must be at least 1, got {processes}")
        self._config = config
        self._metrics = metrics
        self._done = done
        self._judged = judged
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
            if not trace.run_spans and alive:
                # Model calls that may join a run no span marks, across traces: all to one
                # process, which holds the chains they make (`runs.call_chains`).
                child: _Child | None = alive[0]
            else:
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
                    if len(traces) >= MAX_BATCH_TRACES:
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
            elif kind == "judged":
                if self._judged is not None:
                    self._judged(message[1])
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


def _resolve(future: asyncio.Future[bytes], text: bytes) -> None:
    if not future.done():
        future.set_result(text)
