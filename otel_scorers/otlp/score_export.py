"""`OtlpScoreExport`: evaluation spans and events sent over OTLP as pre-written protobuf.

The OTLP output (`emission/otlp_output.py`) writes each run's evaluation spans and events as OTLP bytes (`otlp_encode`) and hands
them here as one item per run. The SDK stays in charge of everything about sending: a
`BatchSpanProcessor` queues and batches the items (its `OTEL_BSP_*` settings, its bounded queue
that drops and logs when full, its fork handling), and the SDK's own OTLP exporters send each
batch as one traces and one logs request, with their retries, timeouts, compression, headers and
`OTEL_EXPORTER_OTLP_*` configuration. Only the step that turns SDK objects into protobuf is
replaced, by a subclass that takes the request already written (over gRPC, also the stub, which
would serialise a message, by one that sends the written bytes).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanContext, TraceFlags

from otel_scorers.bounded_call import call_within
from otel_scorers.otlp.encode import export_request, resource_message, scope_message
from otel_scorers.otlp.endpoint import (
    PROTOCOLS,
    OtlpProtocol,
    configured_endpoint,
    environment_endpoint,
    environment_protocol,
    logs_exporter_wanted,
)
from otel_scorers.otlp.exporters import Signal, exporter_class, exporter_options
from otel_scorers.otlp.refusal import SignalRefusal, guard_http, guarded_stub
from otel_scorers.span_record import OWN_SCOPE
from otel_scorers.version import __version__

#: Of a shutdown's time, what its flush may take: the rest closes the exporters (ending a send in
#: progress) and stops the batch processor, which then takes a few milliseconds.
SHUTDOWN_FLUSH_SHARE = 0.8
#: The batch processor queues only sampled spans; what it queues here always is.
_SAMPLED = SpanContext(1, 1, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))


@dataclass(slots=True)
class EncodedScores:
    """One run's `count` evaluation spans and as many events, written, each framed as an entry
    of its scope's records (`otlp.encode.evaluation_records`), one after the other. Not frozen:
    one is made per run, and nothing changes it once queued."""

    context: ClassVar[SpanContext] = _SAMPLED  # what the batch processor reads
    spans: bytes
    logs: bytes
    count: int


@dataclass(frozen=True, slots=True)
class _Request:
    body: bytes
    count: int


class _Sender:
    """Sends one written request with an SDK exporter; False when the exporter gave up."""

    def __init__(self, exporter: Any, send: Any) -> None:
        self.exporter = exporter
        self._send = send

    def __call__(self, request: _Request) -> bool:
        return bool(self._send(request))

    def shutdown(self) -> None:
        self.exporter.shutdown()


class _WrittenStub:
    """A gRPC stub whose `Export` sends the request's bytes as they were written. The exporters'
    own stubs serialise a message: each written request would be parsed only to be serialised
    again (about 1.5 µs per evaluation span or event)."""

    def __init__(self, channel: Any, method: str, response: Any) -> None:
        self.Export = channel.unary_unary(
            method, request_serializer=_as_written, response_deserializer=response.FromString
        )


def _as_written(body: bytes) -> bytes:
    return body


#: A signal's SDK exporter arguments (`exporters.exporter_options`, the one place they are made).
Options = Callable[[Signal], dict[str, Any]]


def _grpc_senders(options: Options, logs_refusal: SignalRefusal) -> tuple[_Sender, _Sender]:
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
        ExportLogsServiceRequest,
        ExportLogsServiceResponse,
    )
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    )

    # The gRPC exporters' `_export` owns the retry loop and asks `_translate_data` for the
    # request to send. Their channel (made again to reconnect) gets a stub that sends the
    # written bytes; should an SDK make its stub elsewhere, the bytes are parsed into the
    # message its own stub expects (C code).
    def written(
        exporter: Any, method: str, request: Any, response: Any, refusal: SignalRefusal | None = None
    ) -> Any:
        class Written(exporter):  # type: ignore[misc]
            def _initialize_channel_and_stub(self) -> None:
                stub = lambda channel: _WrittenStub(channel, method, response)  # noqa: E731
                self._stub = stub if refusal is None else guarded_stub(stub, refusal)
                super()._initialize_channel_and_stub()

            def _translate_data(self, data: Any) -> Any:
                client = getattr(self._client, "inner", self._client)  # under a refusal guard
                return data.body if isinstance(client, _WrittenStub) else request.FromString(data.body)

            def _count_data(self, data: Any) -> int:
                return int(data.count)

        return Written

    WrittenSpans = written(
        exporter_class("grpc", "traces"),
        "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    )
    WrittenLogs = written(
        exporter_class("grpc", "logs"),
        "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
        ExportLogsServiceRequest,
        ExportLogsServiceResponse,
        logs_refusal,
    )
    spans, logs = WrittenSpans(**options("traces")), WrittenLogs(**options("logs"))
    return (
        _Sender(spans, lambda request: spans.export(request).name == "SUCCESS"),
        _Sender(logs, lambda request: logs.export(request).name == "SUCCESS"),
    )


def _http_senders(options: Options, logs_refusal: SignalRefusal) -> tuple[_Sender, _Sender]:
    spans = exporter_class("http/protobuf", "traces")(**options("traces"))
    logs = guard_http(exporter_class("http/protobuf", "logs")(**options("logs")), logs_refusal)

    # The HTTP exporters' client owns retries, compression and the size limit's neighbours; it
    # takes the serialised request.
    def send_with(exporter: Any) -> Any:
        def send(request: _Request) -> bool:
            if exporter._shutdown:
                return False
            return bool(exporter._client.export(request.body).success)

        return send

    return _Sender(spans, send_with(spans)), _Sender(logs, send_with(logs))


class _RequestExporter(SpanExporter):
    """What the batch processor calls: one traces and one logs request per batch of runs; no
    logs request when `logs_refusal` says the endpoint refuses logs (those events are counted
    there), nor when logs are off (`logs_on`)."""

    def __init__(
        self, spans: _Sender, logs: _Sender, resource: Resource, logs_refusal: SignalRefusal, logs_on: bool
    ) -> None:
        self._spans = spans
        self._logs = logs
        self._logs_refusal = logs_refusal
        self._logs_on = logs_on
        self._resource = resource_message(dict(resource.attributes))
        self._schema_url = resource.schema_url or ""
        self._scope = scope_message(OWN_SCOPE, __version__)
        #: Evaluation spans and events the exporters gave up on (or got once closed).
        self.unsent_spans = 0
        self.unsent_logs = 0
        #: Evaluation spans and events sent.
        self.sent_spans = 0
        self.sent_logs = 0
        self._closed = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        batch = cast("Sequence[EncodedScores]", spans)
        count = sum(item.count for item in batch)  # spans, and as many events
        logs = count if self._logs_on else 0
        if self._closed:
            self.unsent_spans += count
            self.unsent_logs += logs
            return SpanExportResult.FAILURE
        ok = True
        if count:
            body = export_request(
                self._resource, self._schema_url, self._scope, [item.spans for item in batch]
            )
            if self._spans(_Request(body, count)):
                self.sent_spans += count
            else:
                self.unsent_spans += count
                ok = False
        if logs and self._logs_refusal.reason is not None:
            self._logs_refusal.count(logs)
        elif logs:
            body = export_request(
                self._resource, self._schema_url, self._scope, [item.logs for item in batch]
            )
            sent = self._logs(_Request(body, logs))
            if self._logs_refusal.reason is not None:  # refused just now: neither sent nor late
                self._logs_refusal.count(logs)
            elif sent:
                self.sent_logs += logs
            else:
                self.unsent_logs += logs
                ok = False
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        """Ends a send in progress too (the SDK's exporters stop retrying when shut down); what
        comes after is counted as unsent."""
        if not self._closed:
            self._closed = True
            self._spans.shutdown()
            self._logs.shutdown()


class OtlpScoreExport:
    """Where the scoring processor (or the sidecar) sends evaluation spans and events: straight
    to an OTLP endpoint, with the SDK's exporters, a fraction of the CPU of going through SDK spans
    and log records. What arrives is the same. Arguments left out fall back to the SDK's
    `OTEL_EXPORTER_OTLP_*` variables (`OTEL_EXPORTER_OTLP_PROTOCOL` picks the protocol) and
    `OTEL_BSP_*` for batching; `resource` defaults to the tracer provider's when the processor has one.
    Queue and batch sizes count runs (each with its evaluation spans and events): a batch of 64
    runs with six scorers is one request of 384 spans and one of 384 events.
    `logs=False` sends no events (left out: none when `OTEL_LOGS_EXPORTER=none`); an endpoint that
    refuses logs (Jaeger does) is said once and sent no more events (`logs_refusal`, given by a
    sidecar whose other log records go there too), and they are counted in `refused()`."""

    def __init__(
        self,
        endpoint: str | None = None,
        *,
        protocol: OtlpProtocol | None = None,
        headers: Mapping[str, str] | None = None,
        insecure: bool | None = None,
        timeout_s: float | None = None,
        resource: Resource | None = None,
        schedule_delay_millis: float | None = None,
        max_queue_size: int | None = None,
        max_export_batch_size: int = 64,
        logs: bool | None = None,
        logs_refusal: SignalRefusal | None = None,
    ) -> None:
        self.protocol: str = protocol or environment_protocol()
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"unsupported OTLP protocol {self.protocol!r}; use {' or '.join(PROTOCOLS)}")
        self.endpoint = endpoint
        self._options: Options = lambda signal: exporter_options(
            signal, self.protocol, endpoint, headers, insecure, timeout_s
        )
        self.resource = resource
        self.logs = logs if logs is not None else logs_exporter_wanted()
        self.logs_refusal = logs_refusal or SignalRefusal(
            "logs",
            endpoint or configured_endpoint(self.protocol),
            "the gen_ai.evaluation.result events",
            "OTEL_LOGS_EXPORTER=none (or OtlpScoreExport(logs=False))",
        )
        self._schedule_delay_millis = schedule_delay_millis
        self._max_queue_size = max_queue_size
        self._max_export_batch_size = max_export_batch_size
        self._processor: BatchSpanProcessor | None = None
        self._exporter: _RequestExporter | None = None
        #: Evaluation spans and events handed to the batch processor (what it drops when full too).
        self._submitted_spans = 0
        self._submitted_logs = 0
        self._stopped = False

    def start(self, resource: Resource | None = None) -> None:
        """Build the exporters and the batch processor (once); `resource` unless one was given."""
        if self._processor is not None:
            return
        if self.resource is None:
            self.resource = resource or Resource.create()
        if self.protocol == "grpc":
            spans, logs = _grpc_senders(self._options, self.logs_refusal)
        else:
            spans, logs = _http_senders(self._options, self.logs_refusal)
        self._exporter = _RequestExporter(spans, logs, self.resource, self.logs_refusal, self.logs)
        self._processor = BatchSpanProcessor(
            self._exporter,
            schedule_delay_millis=self._schedule_delay_millis,
            max_queue_size=self._max_queue_size,
            max_export_batch_size=self._max_export_batch_size,
        )

    def submit(self, item: EncodedScores) -> None:
        """Queue one run's written scores (never blocks; the SDK drops and logs when full)."""
        if self._processor is None:
            self.start()
        assert self._processor is not None
        self._submitted_spans += item.count
        if self.logs:
            self._submitted_logs += item.count
        self._processor.on_end(cast(ReadableSpan, item))

    def backlog(self) -> float:
        """How full the queue is, 0 to 1."""
        return queue_fullness(self._processor)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._processor.force_flush(timeout_millis) if self._processor is not None else True

    def close_exporters(self) -> None:
        """Stop sending now, ending a send in progress: for a shutdown that has run out of time
        (the SDK's flush and shutdown wait for every retry). What is still queued is counted."""
        if self._exporter is not None:
            self._exporter.shutdown()

    def unsent(self) -> tuple[int, int]:
        """Evaluation spans and events submitted and not sent: after a shutdown, every one that
        never went out (given up on, dropped from a full queue, or still queued at the deadline)."""
        exporter = self._exporter
        if exporter is None:
            return (0, 0)
        return (
            max(self._submitted_spans - exporter.sent_spans, exporter.unsent_spans),
            max(self._submitted_logs - exporter.sent_logs - self.logs_refusal.refused, exporter.unsent_logs),
        )

    def refused(self) -> int:
        """Events not sent because the endpoint refuses logs."""
        return self.logs_refusal.refused

    def shutdown(self, timeout_s: float = 30.0) -> bool:
        """Send what is queued and stop, within `timeout_s` whatever the endpoint does; whether
        everything queued was sent. The SDK's flush and its exporters' retries keep no deadline
        (an endpoint that accepts and never answers holds each attempt for the exporter's
        timeout), so they run on threads given up at the deadline: the flush for
        `SHUTDOWN_FLUSH_SHARE` of it, then the exporters are closed, which ends a send in
        progress, and the batch processor stops. `unsent()` counts what did not go out."""
        processor = self._processor
        if processor is None or self._stopped:
            return True
        self._stopped = True
        deadline = time.monotonic() + timeout_s
        millis = int(timeout_s * 1000)
        flushed = call_within(
            lambda: processor.force_flush(millis), timeout_s * SHUTDOWN_FLUSH_SHARE, "score export flush"
        )

        def stop() -> None:
            self.close_exporters()
            processor.shutdown()  # type: ignore[no-untyped-call]

        stopped = call_within(stop, deadline - time.monotonic(), "score export shutdown")
        return flushed and stopped and self.unsent() == (0, 0)


def chosen_export(export: OtlpScoreExport | bool | None) -> OtlpScoreExport | None:
    """The export a processor writes its scores for. Given one, that one; `True`, one that the
    SDK's `OTEL_EXPORTER_OTLP_*` variables configure; `False`, none (the SDK providers carry the
    scores). `None` is `True` when the environment names an OTLP endpoint (the agent's own spans
    go there through the SDK's exporters) and the SDK is not disabled, else `False`."""
    if isinstance(export, OtlpScoreExport):
        return export
    if export is None:
        disabled = os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"
        export = not disabled and environment_endpoint() is not None
    return OtlpScoreExport() if export else None


def queue_fullness(processor: object) -> float:
    """How full an SDK batch processor's queue is, 0 to 1 (0 when the SDK does not tell)."""
    queue = getattr(getattr(processor, "_batch_processor", None), "_queue", None)
    if queue is None or not queue.maxlen:
        return 0.0
    return float(len(queue) / queue.maxlen)
