"""The scoring process: batches of traces in, each run's score attributes back, the scores
exported over OTLP with its own OpenTelemetry SDK providers (the `export` settings of the
sidecar, its own `service.instance.id`).

It answers the receiving process's messages on the pipe: `("jobs", ...)` (`trace_batches`), to
score; `("metrics", request)`, with its Prometheus text; `("stop", timeout_s, flush_s)`. It says
`("ready",)` once it can score and sends the finished traces back as `("done", [(job id, run
scores or None), ...])`, and, with `labels:`, each run's and conversation's scores as `("judged", [JudgeScore,
...])`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from otel_scorers.config import Config
from otel_scorers.conventions import use_descriptions
from otel_scorers.labels.join_records import JudgeScore
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.model import AgentRun
from otel_scorers.pipeline.scoring_pipeline import ScoredRun
from otel_scorers.runs.call_chains import CallChains
from otel_scorers.runs.no_run import RunlessTraces
from otel_scorers.sidecar.deadline import call_within
from otel_scorers.sidecar.jobs import (
    RunSpanAttributes,
    build_trace_runs,
    join_chains,
    run_span_attributes,
    sidecar_pipeline,
)
from otel_scorers.sidecar.logs import setup_logging
from otel_scorers.sidecar.otlp_spans import OtlpSpan
from otel_scorers.sidecar.trace_batches import MAX_BATCH_TRACES, decode_batch

if TYPE_CHECKING:
    from otel_scorers.otlp.telemetry import Telemetry
    from otel_scorers.pipeline_builder import BuiltPipeline

logger = logging.getLogger("otel_scorers")

#: Longest a finished trace's reply waits for others to share its message.
_REPLY_WAIT_S = 0.02


class Replies:
    """Finished jobs, sent back in batches: when the last job of a received batch is done, when
    `MAX_BATCH_TRACES` wait, and every `_REPLY_WAIT_S` (`flush`, on the engine's loop) for the
    rest (a trace waiting for a judge finishes after the others of its batch). With
    `attributes`, each with its runs' score attributes (inline mode attaches them to the held
    run spans); without (tap mode, where nothing is held), an empty list for a trace scored."""

    def __init__(self, send: Callable[[tuple[Any, ...]], None], attributes: bool) -> None:
        self._send = send
        self._attributes = attributes
        self._pending: list[tuple[int, list[RunSpanAttributes] | None]] = []
        # The engine's thread adds; a job dropped as it is submitted or at shutdown, the main one.
        self._lock = threading.Lock()

    def add(self, job: ReceivedTraceJob, results: Sequence[ScoredRun] | None) -> None:
        """`job` scored (`results`) or dropped (None)."""
        scores = None if results is None else run_span_attributes(results) if self._attributes else []
        with self._lock:
            self._pending.append((job.job_id, scores))
            job.batch[0] -= 1
            due = job.batch[0] <= 0 or len(self._pending) >= MAX_BATCH_TRACES
        if due:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
        if pending:
            self._send(("done", pending))


@dataclass(slots=True, eq=False)
class ReceivedTraceJob:
    """A received trace as a job for the `ScoringEngine`. Not frozen: one is made for every trace
    scored, and a frozen dataclass sets each field through `object.__setattr__`, about three times
    the cost of making one; nothing changes a job once made."""

    job_id: int
    spans: list[OtlpSpan]
    replies: Replies
    #: How many jobs of the batch this one came in are not done yet (shared by them).
    batch: list[int]
    runless: RunlessTraces
    chains: CallChains | None = None

    def build(self) -> Sequence[AgentRun]:
        return build_trace_runs(self.spans, self.runless, self.chains)

    def finished(self, results: Sequence[ScoredRun]) -> None:
        self.replies.add(self, results)

    def dropped(self, reason: str) -> None:
        self.replies.add(self, None)


@dataclass(frozen=True, slots=True)
class _JudgedToParent:
    """The agreement join's judge side for the receiving process, where people's labels arrive:
    a `("judged", scores)` message (`AgreementOutput` calls it with a run's or a conversation's
    scores)."""

    send: Callable[[tuple[Any, ...]], None]

    def add_scores(self, scores: Iterable[JudgeScore]) -> None:
        kept = list(scores)
        if kept:
            self.send(("judged", kept))


class _Stop(Exception):
    """SIGTERM reached the scoring process itself (say, sent to the whole process group)."""


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise _Stop


def worker_main(config: Config, connection: Connection) -> None:
    """The scoring process: jobs in, score attributes out, scores exported over OTLP."""
    from otel_scorers.otlp.telemetry import build_telemetry

    # The parent decides when this process stops (SIGINT reaches the whole process group); a
    # SIGTERM of its own stops it as the parent would, within `shutdown_timeout_s`.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    setup_logging("[scoring]")
    settings = config.sidecar
    use_descriptions(config.conventions)  # the runs are rebuilt here
    sending = threading.Lock()

    def reply(message: tuple[Any, ...]) -> None:
        data = pickle.dumps(message)
        # The parent may be gone; the loop below then ends on EOF.
        with sending, contextlib.suppress(OSError, ValueError):
            connection.send_bytes(data)

    telemetry = build_telemetry(settings.export, speak=False)  # the receiving process speaks
    metrics = PipelineMetrics(telemetry.meter_provider)
    # The agreement join is the parent's: the conversations' scores go there as they are made.
    join = _JudgedToParent(reply) if config.labels is not None else None
    built = sidecar_pipeline(config, telemetry, metrics, join)
    engine = built.engine
    runless = built.runless
    chains = join_chains(settings, metrics)  # the receiving process sends this one every trace without a run
    replies = Replies(reply, attributes=settings.mode == "inline")
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
                received = decode_batch(message[1], message[2], message[3])
                left = [len(received)]
                for job_id, spans in received:
                    engine.submit(ReceivedTraceJob(job_id, spans, replies, left, runless, chains))
            elif kind == "metrics":
                reply(("metrics", message[1], telemetry.prometheus_text()))
            elif kind == "stop":
                timeout_s, flush_s = message[1], message[2]
                break
    except _Stop:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # stopping already
    _stop_scoring(built, replies, telemetry, timeout_s, flush_s)
    connection.close()
    # Everything worth keeping is sent or counted; tearing the interpreter down (gRPC's and the
    # SDK's modules and threads) takes about half a second more, past the deadline.
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(0)


def _stop_scoring(
    built: BuiltPipeline, replies: Replies, telemetry: Telemetry, timeout_s: float, flush_s: float
) -> None:
    """Finish scoring what was received within `timeout_s`, send the last replies, then export
    the scores within what is left of `timeout_s + flush_s`."""
    deadline = time.monotonic() + timeout_s + flush_s
    # The runs, then their conversations (judged on the engine's loop), then the engine stops.
    if not call_within(lambda: built.shutdown(timeout_s), timeout_s + 0.1, "scoring shutdown"):
        logger.warning("otel_scorers: scoring did not stop within %.1f s", timeout_s)
    replies.flush()
    telemetry.shutdown(max(0.1, deadline - time.monotonic()))
