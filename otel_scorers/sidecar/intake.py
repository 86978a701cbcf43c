"""What both receivers do with a decoded request: admit it within the limits, sort its spans out,
forward it (inline mode), buffer the sampled spans, and say what was accepted.

Refusing is all or nothing and retryable, so a collector that retries loses nothing; a span
that is itself invalid (bad ids) is rejected alone and reported as a partial success.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_scorers.metrics import OUTCOME, REASON, PipelineMetrics
from otel_scorers.otlp.span_cut import Position, without_spans
from otel_scorers.sidecar.batch_assembler import BatchAssembler
from otel_scorers.sidecar.forwarder import Forwarder, ForwardError
from otel_scorers.sidecar.hold import HeldRunSpans
from otel_scorers.sidecar.otlp_spans import OtlpSpan
from otel_scorers.sidecar.request_scan import Scan, reads_trace_ids_first, reject_unparsed, scan
from otel_scorers.throttled_log import throttled

RefusalKind = Literal["busy", "unavailable"]


@dataclass(frozen=True, slots=True)
class Accepted:
    rejected: int = 0
    message: str = ""


class Refused(Exception):
    """The whole request is refused; the sender should retry after `retry_after_s`."""

    def __init__(self, kind: RefusalKind, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retry_after_s = retry_after_s


class Intake:
    def __init__(
        self,
        assembler: BatchAssembler,
        min_threshold: int,
        metrics: PipelineMetrics,
        retry_after_s: float,
        forwarder: Forwarder | None = None,
        held: HeldRunSpans | None = None,
    ) -> None:
        self.assembler = assembler
        self._min_threshold = min_threshold
        self._metrics = metrics
        self._retry_after_s = retry_after_s
        self._forwarder = forwarder
        self._held = held
        self.closing = False
        #: Whether protobuf requests are read for their trace ids first (`decode_salvaging`).
        self.trace_ids_first = reads_trace_ids_first(min_threshold)

    def _refuse(self, kind: RefusalKind, reason: str, message: str, spans: int) -> Refused:
        self._metrics.receiver_spans.add(spans, {OUTCOME: "refused", REASON: reason})
        return Refused(kind, message, self._retry_after_s)

    def has_room(self) -> bool:
        """Whether a request arriving now can be admitted (on the event loop's thread). When it
        cannot, `export` refuses it whole, so receivers do not sort it out first: under pushback,
        sorting out the requests about to be refused was most of the receiving process's work."""
        return not self.closing and self.assembler.make_room() is None

    def sort_out(self, request: ExportTraceServiceRequest | Any, size: int) -> Scan:
        """What `export` would make of the request: on any thread (it reads nothing shared)."""
        return scan(request, size, self._min_threshold)

    async def export(
        self,
        request: ExportTraceServiceRequest | Any,
        body: bytes | None,
        size: int,
        sorted_out: Scan | None = None,
        unparsed: tuple[int, str] = (0, ""),
    ) -> Accepted:
        """Take one request (an `ExportTraceServiceRequest`, or a `TraceIdRequest` read from
        `body`). `body` is its protobuf encoding when the sender used protobuf; `sorted_out` is
        `sort_out(request, size)` when the caller already did it."""
        self._refuse_without_room(request)
        result = sorted_out if sorted_out is not None else scan(request, size, self._min_threshold)
        over_limit = self.assembler.admit(result)
        # Forwarded before anything is buffered: a request downstream refuses is refused whole.
        forwarder = self._forwarder
        held_back = await self._forward(forwarder, request, body, result) if forwarder is not None else []
        late_runs = self.assembler.commit(result)
        if self._held is not None and held_back:
            _hold(self._held, held_back, late_runs)
        return self._answer(result, self._settle_over_limit(over_limit), unparsed)

    def _refuse_without_room(self, request: ExportTraceServiceRequest | Any) -> None:
        """Refuse the whole request (retryable) while shutting down or while the buffers are full."""
        if self.closing:
            raise self._refuse(
                "unavailable", "shutting_down", "the sidecar is shutting down", _count(request)
            )
        full = self.assembler.make_room()
        if full is not None:
            throttled.warning(
                "sidecar_busy", "otel_scorers: refusing requests until scoring catches up: %s", full
            )
            raise self._refuse("busy", "limit", f"too busy, retry later: {full}", _count(request))

    async def _forward(
        self, forwarder: Forwarder, request: ExportTraceServiceRequest | Any, body: bytes | None, result: Scan
    ) -> list[OtlpSpan]:
        """Inline mode: send the request on without its invalid spans and without the run spans of
        traces not scored yet, which it returns, to be held until their scores are attached.
        Refuses the whole request (retryable) when downstream does not take it."""
        assembler = self.assembler
        held_back = [
            item
            for held in (result.runs, result.named_runs)
            for trace_id, runs in held.items()
            if not assembler.is_decided(trace_id)
            for item in runs
        ]
        received = body
        if held_back or result.rejected or body is None:
            body = _forwarded(request, body, result, held_back)
        try:
            await forwarder.send(body)
        except ForwardError as exc:
            # Read for its trace ids first, the request may hold spans downstream finds do not
            # parse (a string that is not UTF-8): those are rejected alone, the rest goes on.
            if exc.retryable or not reject_unparsed(request, result):
                raise self._refuse("unavailable", "downstream", str(exc), result.total) from None
            try:
                await forwarder.send(_forwarded(request, received, result, held_back))
            except ForwardError as again:
                raise self._refuse("unavailable", "downstream", str(again), result.total) from None
        return held_back

    def _settle_over_limit(self, over_limit: int) -> int:
        """Spans past a buffer limit: how many of them are refused. In inline mode they were
        forwarded all the same: they are accepted, only not scored. In tap mode they are refused,
        as a partial success (not retryable: they would not fit any better next time in the same
        request)."""
        if not over_limit:
            return 0
        refused = over_limit if self._forwarder is None else 0
        if refused:
            self._metrics.receiver_spans.add(over_limit, {OUTCOME: "refused", REASON: "limit"})
        else:
            self._metrics.dropped_spans.add(over_limit, {REASON: "limit"})
        throttled.warning(
            "sidecar_admit_limit",
            "otel_scorers: %d spans of a request did not fit the buffer limits (%s)",
            over_limit,
            "refused" if refused else "forwarded, not scored",
        )
        return refused

    def _answer(self, result: Scan, refused_over_limit: int, unparsed: tuple[int, str]) -> Accepted:
        """Count the request's spans by outcome and say which were not accepted, and why."""
        accepted = result.accepted - refused_over_limit
        if accepted:
            self._metrics.receiver_spans.add(accepted, {OUTCOME: "accepted"})
        if result.rejected:
            self._metrics.receiver_spans.add(
                len(result.rejected), {OUTCOME: "refused", REASON: "invalid_span"}
            )
        unparsed_spans, unparsed_problem = unparsed
        if unparsed_spans:
            self._metrics.receiver_spans.add(unparsed_spans, {OUTCOME: "refused", REASON: "invalid_span"})
        rejected = len(result.rejected) + refused_over_limit + unparsed_spans
        if rejected:
            problems = [result.problem or "invalid spans"] if result.rejected else []
            if unparsed_spans:
                problems.append(f"{unparsed_spans} spans left out: {unparsed_problem}")
            if refused_over_limit:
                problems.append(
                    f"{refused_over_limit} spans did not fit the buffer limits (max_traces, max_spans, max_bytes)"
                )
            return Accepted(rejected, "; ".join(problems))
        return Accepted()


def _hold(held: HeldRunSpans, held_back: Sequence[OtlpSpan], late_runs: Iterable[OtlpSpan]) -> None:
    """Inline mode: the run spans held back from downstream wait for their scores, except those of
    traces already scored (late), which go on now."""
    late = {id(item) for item in late_runs}
    held.hold(item for item in held_back if id(item) not in late)
    held.send_now(item for item in held_back if id(item) in late)


def _count(request: ExportTraceServiceRequest | Any) -> int:
    return sum(len(scope.spans) for resource in request.resource_spans for scope in resource.scope_spans)


def _forwarded(
    request: ExportTraceServiceRequest | Any, body: bytes | None, result: Scan, holding: Sequence[OtlpSpan]
) -> bytes:
    """What goes on downstream: the request without its rejected spans and the run spans being
    held, cut from the bytes received when there are some (encoding the parsed request again cost
    about what parsing it did), else encoded from the parsed request."""
    drop = {result.run_positions[id(item)] for item in holding}
    drop.update(result.rejected)
    if body is not None:
        try:
            return without_spans(body, drop)
        except ValueError:  # a field the cut does not step over (a group): encoded again below
            pass
    encoded: bytes = _without(request, result, drop).SerializeToString()
    return encoded


def _without(request: ExportTraceServiceRequest | Any, result: Scan, drop: Collection[Position]) -> Any:
    """The request without the spans at `drop`: the request itself when the kept spans were
    copied out of it (nothing buffered points into it), else a copy. Spans are removed by their
    position, so the other spans are not looked at; a `TraceIdRequest` is encoded again with the
    fields of each span it stepped over."""
    if not drop:
        return request
    if result.detached:
        target = request
    else:
        target = type(request)()
        target.CopyFrom(request)
    for r_index, s_index, p_index in sorted(drop, reverse=True):  # later positions first
        del target.resource_spans[r_index].scope_spans[s_index].spans[p_index]
    return target
