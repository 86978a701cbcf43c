"""Inline mode: run spans kept back from downstream until their scores are attached, at most
`hold_timeout_s` (a `HoldQueue`, as the processor's); after that they go on without scores (the
scores still go out as evaluation spans, events and metrics)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from otel_scorers.emission.hold_queue import HoldQueue
from otel_scorers.metrics import REASON, PipelineMetrics
from otel_scorers.sidecar.otlp_spans import Batch, OtlpSpan
from otel_scorers.throttled_log import throttled

logger = logging.getLogger("otel_scorers")
Send = Callable[[bytes], Awaitable[None]]
_SEND_ATTEMPTS = 3


def span_key(trace_id: int, span_id: int) -> bytes:
    return trace_id.to_bytes(16, "big") + span_id.to_bytes(8, "big")


def _set_value(target: AnyValue, value: Any) -> None:
    if isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, int):
        target.int_value = value
    elif isinstance(value, float):
        target.double_value = value
    else:
        target.string_value = str(value)


def encode_spans(items: Iterable[tuple[OtlpSpan, Mapping[str, Any]]]) -> bytes:
    """One request carrying the given spans under their own resource and scope, each with the
    extra attributes given for it."""
    request = ExportTraceServiceRequest()
    by_origin: dict[int, Any] = {}
    for item, extra in items:
        origin = item.origin
        scope_spans = by_origin.get(id(origin))
        if scope_spans is None:
            resource_spans = request.resource_spans.add()
            resource_spans.resource.CopyFrom(origin.resource)
            scope_spans = resource_spans.scope_spans.add()
            scope_spans.scope.CopyFrom(origin.scope)
            scope_spans.schema_url = origin.schema_url
            by_origin[id(origin)] = scope_spans
        span = scope_spans.spans.add()
        received = item.span
        if type(received) is Span:
            span.CopyFrom(received)
        else:  # read with `span_bytes_schema`: the same bytes on the wire
            span.MergeFromString(received.SerializeToString())
        for key, value in extra.items():
            attribute = span.attributes.add()
            attribute.key = key
            _set_value(attribute.value, value)
    encoded: bytes = request.SerializeToString()
    return encoded


class HeldRunSpans:
    """Held run spans (a `HoldQueue` keyed by trace id + span id), and the outbox that sends
    released ones downstream in batches. Runs on the event loop."""

    def __init__(
        self,
        send: Send,
        timeout_s: float,
        metrics: PipelineMetrics,
        retain: Callable[[Batch], None],
        unretain: Callable[[Batch], None],
    ) -> None:
        self._send = send
        self._metrics = metrics
        self._retain = retain
        self._unretain = unretain
        self._queue: HoldQueue[bytes, OtlpSpan] = HoldQueue(timeout_s, self._to_outbox)
        self._outbox: list[tuple[OtlpSpan, Mapping[str, Any]]] = []
        self._wake = asyncio.Event()
        self._sending = asyncio.Lock()

    def __len__(self) -> int:
        return len(self._queue)

    def hold(self, items: Iterable[OtlpSpan]) -> None:
        for item in items:
            span = item.span
            # False for a retried request: the span is already held.
            if self._queue.hold(span.trace_id + span.span_id, item):
                self._retain(item.origin.batch)

    def release(self, key: bytes, attributes: Mapping[str, Any] | None = None) -> None:
        self._queue.release(key, attributes)

    def release_expired(self) -> None:
        self._queue.release_expired()

    def release_all(self) -> None:
        self._queue.release_all()

    def _to_outbox(self, item: OtlpSpan, attributes: Mapping[str, Any] | None) -> None:
        self._outbox.append((item, attributes or {}))
        self._wake.set()

    def send_now(self, items: Iterable[OtlpSpan]) -> None:
        """Spans that must go on without being held (a late run span)."""
        for item in items:
            self._retain(item.origin.batch)
            self._outbox.append((item, {}))
        self._wake.set()

    async def run(self) -> None:
        """Send released spans downstream in batches until cancelled."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            await self.flush()

    async def flush(self) -> None:
        async with self._sending:
            await self._flush()

    async def _flush(self) -> None:
        while self._outbox:
            batch, self._outbox = self._outbox[:512], self._outbox[512:]
            body = encode_spans(batch)
            for attempt in range(_SEND_ATTEMPTS):
                try:
                    await self._send(body)
                    break
                except Exception as exc:
                    if attempt + 1 == _SEND_ATTEMPTS:
                        self._metrics.dropped_spans.add(len(batch), {REASON: "forward_failed"})
                        throttled.warning(
                            "held_forward_failed",
                            "otel_scorers: could not forward %d held run spans downstream: %s",
                            len(batch),
                            exc,
                        )
                    else:
                        await asyncio.sleep(0.2 * (attempt + 1))
            for item, _ in batch:
                self._unretain(item.origin.batch)
