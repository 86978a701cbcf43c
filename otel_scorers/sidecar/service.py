"""The sidecar service: receivers, trace assembly, the scoring engine and exports, wired together.

Everything network-facing runs on one asyncio loop; scoring runs on the engine's own thread.
A ticker on the loop decides which traces are ready, hands them to the engine (never more than
`max_runs_in_flight` at a time, so the engine's queue cannot overflow and drop them), and in
inline mode lets held run spans go when their hold times out.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence

from otel_scorers.config import Config, SidecarConfig
from otel_scorers.conventions import use_descriptions
from otel_scorers.conversations.source import Conversations
from otel_scorers.errors import ListenError
from otel_scorers.labels.agreement import Agreement
from otel_scorers.labels.label_ranges import scoring_ranges
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.otlp.telemetry import Telemetry, build_telemetry
from otel_scorers.pipeline_builder import BuiltPipeline, observe_buffered_traces, show_agreement
from otel_scorers.runs.no_run import RunlessTraces
from otel_scorers.sidecar.batch_assembler import BatchAssembler, BufferedTrace, Limits
from otel_scorers.sidecar.conversation_intake import ConversationIntake
from otel_scorers.sidecar.deadline import within
from otel_scorers.sidecar.export_destination import endpoint_configured, export_destination
from otel_scorers.sidecar.forward_merge import MergingForwarder
from otel_scorers.sidecar.forwarder import Forwarder, make_forwarder
from otel_scorers.sidecar.grpc import GrpcReceiver
from otel_scorers.sidecar.hold import HeldRunSpans
from otel_scorers.sidecar.http import HttpReceiver
from otel_scorers.sidecar.intake import Intake
from otel_scorers.sidecar.jobs import (
    RunSpanAttributes,
    Scoring,
    ThreadScoring,
    join_chains,
    receiving_conversations,
    sidecar_pipeline,
)
from otel_scorers.sidecar.security import TokenCheck, resolve_token, ssl_context
from otel_scorers.sidecar.worker_pool import ProcessScoring

logger = logging.getLogger("otel_scorers")


def receivers(
    settings: SidecarConfig,
    intake: Intake,
    token: TokenCheck,
    conversations: Conversations | None,
    ready: Callable[[], str | None],
    metrics_text: Callable[[], Awaitable[bytes]],
    agreement: Agreement | None = None,
) -> tuple[GrpcReceiver | None, HttpReceiver]:
    """The OTLP receivers (`/v1/logs` too, for turn records where conversations are kept here,
    and for people's labels where they are taken)."""
    logs = (
        ConversationIntake(conversations, agreement)
        if conversations is not None or agreement is not None
        else None
    )
    grpc: GrpcReceiver | None = None
    if settings.grpc.enabled:
        grpc = GrpcReceiver(
            intake,
            token,
            settings.grpc.host,
            settings.grpc.port,
            settings.max_request_bytes,
            settings.tls,
            read_timeout_s=settings.read_timeout_s,
            max_connections=settings.max_connections,
            logs=logs,
        )
    http = HttpReceiver(
        intake,
        token,
        settings.http.host,
        settings.http.port,
        settings.max_request_bytes,
        settings.tls,
        receive_traces=settings.http.enabled,
        ready=ready,
        metrics_text=metrics_text,
        grace_s=min(2.0, settings.shutdown_timeout_s / 4),
        metrics_require_token=settings.metrics_require_token,
        read_timeout_s=settings.read_timeout_s,
        max_connections=settings.max_connections,
        retry_after_s=settings.retry_after_s,
        logs=logs,
    )
    return grpc, http


def _batch_assembler(
    settings: SidecarConfig, metrics: PipelineMetrics, runless: RunlessTraces
) -> BatchAssembler:
    """The buffers of traces waiting to be scored, within the settings' limits and waits."""
    return BatchAssembler(
        metrics,
        Limits(settings.max_traces, settings.max_spans, settings.max_bytes),
        decision_wait_s=settings.decision_wait_s,
        max_wait_s=settings.max_wait_s,
        late_memory=settings.late_trace_memory,
        runless=runless,
        join_calls=settings.join_calls,
    )


def _inline_forwarding(
    settings: SidecarConfig, metrics: PipelineMetrics, assembler: BatchAssembler
) -> tuple[Forwarder | None, HeldRunSpans | None]:
    """In inline mode, where spans are forwarded and the run spans held until their scores are
    on them (their requests' memory counted in the assembler's buffers); else neither."""
    if settings.mode != "inline":
        return None, None
    assert settings.forward is not None  # the config model checks this
    forwarder = MergingForwarder(make_forwarder(settings.forward))
    held = HeldRunSpans(
        forwarder.send,
        settings.hold_timeout_s,
        metrics,
        assembler.retain,
        assembler.unretain,
    )
    return forwarder, held


class Sidecar:
    """`otel-scorers serve` as an object. `telemetry` replaces the SDK providers built from the
    `export` settings; scoring then happens in this process (a child process cannot use them)."""

    def __init__(self, config: Config, telemetry: Telemetry | None = None) -> None:
        settings = config.sidecar
        self.settings = settings
        use_descriptions(config.conventions)  # before any span is received
        # Certificates and the token are checked before anything starts (exporters included).
        self._token = TokenCheck(resolve_token(settings))
        if settings.tls is not None:
            ssl_context(settings.tls)
        self.telemetry = telemetry or build_telemetry(settings.export)
        self.metrics = PipelineMetrics(self.telemetry.meter_provider)
        #: People's labels (`/v1/logs`), joined with the scores of the same runs and
        #: conversations, which reach it through the `AgreementOutput` of whichever pipeline
        #: scores them (from a scoring process, carried as its "judged" messages).
        self.agreement: Agreement | None = config.labels.agreement() if config.labels is not None else None
        if self.agreement is not None:  # each scorer's labels in the range of its values
            self.agreement.expect(scoring_ranges(*config.scoring()))
        # Scoring in child processes (`scoring_process`), else on an engine thread of this one,
        # whose builder shows the join's figures as metrics. The join is this process's either
        # way: with no pipeline here, its figures are shown by the builder's `show_agreement`
        # all the same (the child processes' pipelines hold only what carries scores here).
        here = None
        if not (settings.scoring_process and telemetry is None):
            here = sidecar_pipeline(config, self.telemetry, self.metrics, self.agreement)
        elif self.agreement is not None:
            show_agreement(self.metrics, self.agreement)
        self.scoring = self._scoring(config, here)
        #: Traces in which no run was found, counted by their root's scope (`no_run`).
        self.runless = here.runless if here is not None else RunlessTraces(self.metrics)
        #: The conversations the Collector routes here, as turn records (`/v1/logs`).
        self.conversations = receiving_conversations(
            config, self.telemetry, self.metrics, here, self.agreement
        )
        self.assembler = _batch_assembler(settings, self.metrics, self.runless)
        observe_buffered_traces(self.metrics, lambda: self.assembler.buffered_traces)
        self._forwarder, self.held = _inline_forwarding(settings, self.metrics, self.assembler)
        buffered = here.buffered if here is not None else config.buffered_sampler()
        self.intake = Intake(
            self.assembler,
            buffered.threshold,
            self.metrics,
            settings.retry_after_s,
            self._forwarder,
            self.held,
        )
        self.grpc, self.http = receivers(
            settings,
            self.intake,
            self._token,
            self.conversations,
            self._not_ready,
            self.scoring.prometheus_text,
            self.agreement,
        )
        self._in_flight = 0
        self._done: deque[tuple[BufferedTrace, Sequence[RunSpanAttributes] | None]] = deque()
        self._tasks: list[asyncio.Task[None]] = []
        self._started = False
        self._stopped = False

    def _scoring(self, config: Config, here: BuiltPipeline | None) -> Scoring:
        if here is not None:
            return ThreadScoring(
                here, self._job_done, self.telemetry.prometheus_text, join_chains(self.settings, self.metrics)
            )
        return ProcessScoring(
            config,
            self.metrics,
            self._job_done,
            self.telemetry.prometheus_text,
            processes=self.settings.scoring_processes,
            judged=self.agreement.add_scores if self.agreement is not None else None,
        )

    def destinations(self) -> str:
        """Where scores go, in words, for the line `serve` logs when it starts."""
        export = self.settings.export
        where = export_destination(export)
        if self.settings.console:
            return (
                f"standard output, one line each, and {where}"
                if export.enabled
                else "standard output, one line each"
            )
        if not endpoint_configured(export):
            where += " (serve --console prints each score here instead)"
        return where

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def _not_ready(self) -> str | None:
        if not self._started:
            return "starting"
        if self.intake.closing:
            return "shutting down"
        return self.assembler.over_limit()

    async def start(self) -> None:
        """Start scoring, then the receivers. A receiver that cannot listen raises `ListenError`
        (naming the address), with everything started so far stopped again."""
        await self.scoring.start()
        try:
            if self.grpc is not None:
                port = await self.grpc.start()
                logger.info("otel_scorers: OTLP/gRPC receiver on %s:%d", self.settings.grpc.host, port)
            port = await self.http.start()
        except ListenError:
            await self._abandon()
            raise
        logger.info(
            "otel_scorers: OTLP/HTTP receiver and /metrics, /healthz, /readyz on %s:%d",
            self.settings.http.host,
            port,
        )
        logger.info("otel_scorers: scores go to %s", self.destinations())
        tick = min(0.05, self.settings.decision_wait_s / 4)
        self._tasks.append(asyncio.create_task(self._tick_forever(tick)))
        if self.held is not None:
            self._tasks.append(asyncio.create_task(self.held.run()))
        self._started = True

    async def _abandon(self) -> None:
        """Undo a start that failed: nothing was received, so nothing waits to be scored."""
        self._stopped = True
        if self.grpc is not None:
            await self.grpc.stop(0)
        scoring = self.scoring
        await within(lambda: scoring.shutdown(0.1, 0.5), 1.0, "scoring shutdown")
        await within(lambda: self.telemetry.shutdown(0.5), 0.7, "telemetry shutdown")

    async def _tick_forever(self, interval_s: float) -> None:
        while True:
            await asyncio.sleep(interval_s)
            try:
                self.tick()
            except Exception:
                logger.exception("otel_scorers: sidecar tick failed")

    def tick(self) -> None:
        self._collect_done()
        self.assembler.poll()
        self._dispatch()
        if self.held is not None:
            self.held.release_expired()

    def _dispatch(self) -> None:
        limit = self.settings.max_runs_in_flight
        while self._in_flight < limit:
            trace = self.assembler.take_ready()
            if trace is None:
                return
            self._in_flight += 1
            self.scoring.submit(trace)

    def _job_done(self, trace: BufferedTrace, results: Sequence[RunSpanAttributes] | None) -> None:
        # Called on the engine's thread: hand over to the loop, which owns the buffers. A deque
        # append is thread-safe and, unlike waking the loop once per trace, costs no syscall;
        # the ticker collects the finished traces.
        self._done.append((trace, results))

    def _collect_done(self) -> None:
        done = self._done
        while done:
            trace, results = done.popleft()
            self._finish(trace, results)

    def _finish(self, trace: BufferedTrace, results: Sequence[RunSpanAttributes] | None) -> None:
        self._in_flight -= 1
        self._release(trace, results)

    def _release(self, trace: BufferedTrace, results: Sequence[RunSpanAttributes] | None) -> None:
        held = self.held
        if held is not None:
            for key, attributes, *_ in results or ():
                held.release(key, attributes)
            # Runs that were not built still go on, without scores.
            for item in (*trace.run_spans, *trace.named_runs):
                held.release(item.span.trace_id + item.span.span_id)
        self.assembler.release(trace)

    async def stop(self) -> None:
        """Stop accepting, score what is pending, flush the exports: all within
        `shutdown_timeout_s`, whatever the collector does (the last quarter of it, at most 2 s,
        is kept for the flush)."""
        if self._stopped:
            return
        self._stopped = True
        timeout_s = self.settings.shutdown_timeout_s
        deadline = time.monotonic() + timeout_s
        flush_s = min(2.0, timeout_s / 4)
        scoring_end = deadline - flush_s
        self.intake.closing = True
        grace_s = min(2.0, timeout_s / 4)
        if self.grpc is not None:
            await self.grpc.stop(grace_s)
        await self.http.stop()
        self.assembler.drain()
        while (self.assembler.ready_traces or self._in_flight) and time.monotonic() < scoring_end:
            self._collect_done()
            self._dispatch()
            await asyncio.sleep(0.01)
        unscored = self.assembler.ready_traces
        while (trace := self.assembler.take_ready()) is not None:
            self._release(trace, None)
        if unscored:
            self.metrics.run_outcome("dropped", "shutdown", unscored)
            logger.warning("otel_scorers: shutdown timed out; %d traces with runs were not scored", unscored)
        if self.conversations is not None:  # those still open: scored or dropped, as configured,
            conversations = self.conversations  # while the loop they are judged on still runs
            conversations_s = max(0.1, (scoring_end - time.monotonic()) / 2)
            await within(
                lambda: conversations.shutdown(conversations_s),
                conversations_s + 0.2,
                "conversations shutdown",
            )
        scoring_s = max(0.1, scoring_end - time.monotonic())
        scoring = self.scoring
        if not await within(
            lambda: scoring.shutdown(scoring_s, flush_s), scoring_s + flush_s + 0.2, "scoring shutdown"
        ):
            logger.warning("otel_scorers: scoring did not stop within %.1f s; exiting anyway", scoring_s)
        self._collect_done()
        if self.held is not None:
            self.held.release_all()
            await self.held.flush()  # after any send in progress: flushes take turns
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._forwarder is not None:
            await self._forwarder.close()
        # Bounded inside: the exporters are shut down at the deadline, whatever they were doing.
        flush_deadline = max(deadline, time.monotonic() + 0.25)
        await within(
            lambda: self.telemetry.shutdown(flush_deadline - time.monotonic()),
            flush_deadline - time.monotonic() + 0.2,
            "telemetry shutdown",
        )
