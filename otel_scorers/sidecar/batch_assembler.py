"""Trace assembly across requests: spans of one trace arrive in any order, in several requests.

A collector sends batches, not traces. Spans of a trace that some binding may sample are kept
(as received protobuf, unconverted) until the trace has gone `decision_wait_s` without a new span
and holds a run span, or `max_wait_s` after its first span; then it is ready to be scored.
A trace without a run span is kept up to `max_wait_s` (its run span may still come), then
scored all the same when its model calls may join a run no span marks (`join_calls`: a trace of
which no span is of a kind a convention reads, `joinable.py`, is let go), and is the first thing
let go when memory is short; spans let go are counted (`no_run_span`), and a run span
that comes after its trace was let go counts as late rather than being scored without its children. Spans arriving for a trace whose runs were already
built are counted as late, never buffered. Memory is bounded by traces, spans and bytes; at the
limit the receivers refuse the request (the collector retries), so nothing is lost. Each request
is sorted out first (`request_scan.py`), then admitted and committed here.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from otel_scorers.metrics import REASON, PipelineMetrics
from otel_scorers.runs.no_run import RunlessTraces
from otel_scorers.sidecar.joinable import holds_convention_span
from otel_scorers.sidecar.otlp_spans import Batch, OtlpSpan
from otel_scorers.sidecar.request_scan import Scan, detach
from otel_scorers.sidecar.span_marks import NAMES_A_RUN, NO_MARK
from otel_scorers.throttled_log import throttled


@dataclass(frozen=True, slots=True)
class Limits:
    """What the assembler may buffer at once; the defaults are `SidecarConfig`'s."""

    max_traces: int
    max_spans: int
    max_bytes: int

    def reached(self, held_bytes: int, spans: int, traces: int) -> str | None:
        """Which limit buffering this much reaches, if any, said with the figures."""
        if held_bytes >= self.max_bytes:
            return f"{held_bytes} bytes buffered or being received (limit {self.max_bytes})"
        if spans >= self.max_spans:
            return f"{spans} spans buffered (limit {self.max_spans})"
        if traces >= self.max_traces:
            return f"{traces} traces buffered (limit {self.max_traces})"
        return None


@dataclass(slots=True, eq=False)
class BufferedTrace:
    """A trace the assembler buffers until it is ready, then hands to scoring; its spans count
    against the limits until scoring gives it back (`release`)."""

    key: bytes
    first_seen: float
    last_seen: float
    spans: list[OtlpSpan] = field(default_factory=list)
    run_spans: list[OtlpSpan] = field(default_factory=list)
    #: The most a span of it says of a vocabulary that may be inferred (`span_marks`): a trace
    #: a kind key says opens a run is ready once quiet, as one with a run span; one whose kind
    #: key names calls only is scored at `max_wait_s`, whatever `join_calls` says.
    kind: int = NO_MARK
    #: Its spans whose kind key names a run: held back in inline mode until it is scored.
    named_runs: list[OtlpSpan] = field(default_factory=list)

    @property
    def opens_run(self) -> bool:
        """Whether a span of it may open a run: by a reader's markers, or by a kind key."""
        return bool(self.run_spans) or self.kind == NAMES_A_RUN


def _root_scope(spans: list[OtlpSpan]) -> str | None:
    """The scope of the trace's root span (no parent id); of its earliest span when the root did
    not come. Reads ids and times only."""
    root = next((item for item in spans if not item.span.parent_span_id), None)
    if root is None:
        root = min(spans, key=lambda item: item.span.start_time_unix_nano, default=None)
    return root.origin.scope.name if root is not None else None


@dataclass(slots=True)
class _Headroom:
    """What the buffers would hold, counted up trace by trace as `BatchAssembler.admit` decides
    which of a request's traces fit under the limits."""

    limits: Limits
    traces: int
    spans: int
    held: float

    def fits(self, new_traces: int, spans: int, size: float) -> bool:
        # Spans of a trace already buffered add no trace: those fit however many traces there are.
        if new_traces and self.traces + new_traces > self.limits.max_traces:
            return False
        return self.spans + spans <= self.limits.max_spans and self.held + size <= self.limits.max_bytes

    def take(self, new_traces: int, spans: int, size: float) -> None:
        self.traces += new_traces
        self.spans += spans
        self.held += size


class _DecidedTraces:
    """The latest `size` traces whose runs were built (oldest forgotten first): spans that arrive
    for them are late, counted and never buffered, rather than scored as a run without them."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._keys: OrderedDict[bytes, None] = OrderedDict()

    def __contains__(self, key: bytes) -> bool:
        return key in self._keys

    def remember(self, key: bytes) -> None:
        if self._size <= 0:
            return
        keys = self._keys
        keys[key] = None
        if len(keys) > self._size:
            keys.popitem(last=False)


def _count_let_go(metrics: PipelineMetrics, spans: int, reason: str, why: str) -> None:
    if spans:
        metrics.dropped_spans.add(spans, {REASON: reason})
        throttled.warning(
            f"sidecar_{reason}",
            "otel_scorers: let go of %d spans of traces without an agent run span: %s",
            spans,
            why,
        )


class BatchAssembler:
    """Buffers sampled traces across requests and hands out those ready to be scored."""

    def __init__(
        self,
        metrics: PipelineMetrics,
        limits: Limits,
        decision_wait_s: float,
        max_wait_s: float,
        late_memory: int,
        clock: Callable[[], float] = time.monotonic,
        runless: RunlessTraces | None = None,
        join_calls: bool = False,
    ) -> None:
        """`join_calls`: a trace that got no run span within `max_wait_s` is scored all the same,
        for the model calls in it may make a run no span marks (`runs.call_chains`)."""
        self._metrics = metrics
        self._join_calls = join_calls
        self._runless_traces = runless
        self.limits = limits
        self._decision_wait_s = decision_wait_s
        self._max_wait_s = max_wait_s
        self._clock = clock
        # Least recently extended first, so the traces due for a decision sit at the front.
        self._traces: OrderedDict[bytes, BufferedTrace] = OrderedDict()
        # Quiet traces without a run span yet, oldest first: their run span may still come (an SDK
        # exports the root span last), until max_wait_s.
        self._runless: OrderedDict[bytes, BufferedTrace] = OrderedDict()
        self._ready: deque[BufferedTrace] = deque()
        self._decided = _DecidedTraces(late_memory)
        self._last_full_scan = clock()
        self.buffered_spans = 0
        self.buffered_bytes = 0
        #: Request bodies being received: they count against `max_bytes` too.
        self.reading_bytes = 0
        self.ready_traces = 0

    def retain(self, batch: Batch, count: int = 1) -> None:
        if batch.refs == 0:
            self.buffered_bytes += batch.size
        batch.refs += count

    def unretain(self, batch: Batch, count: int = 1) -> None:
        batch.refs -= count
        if batch.refs <= 0:
            batch.refs = 0
            self.buffered_bytes -= batch.size

    def reserve(self, size: int) -> bool:
        """Count `size` bytes of a body being received, unless that would pass `max_bytes`."""
        if self.buffered_bytes + self.reading_bytes + size > self.limits.max_bytes:
            return False
        self.reading_bytes += size
        return True

    @property
    def buffered_traces(self) -> int:
        return len(self._traces) + len(self._runless) + self.ready_traces

    def over_limit(self) -> str | None:
        """Which limit is reached, if any (then the next request is refused)."""
        held = self.buffered_bytes + self.reading_bytes
        return self.limits.reached(held, self.buffered_spans, self.buffered_traces)

    def make_room(self) -> str | None:
        """Let go of quiet traces without a run span (oldest first) until under the limits; what is
        still over, if anything."""
        reason = self.over_limit()
        if reason is None:
            return None
        # Only quiet run-less traces are candidates: looking at them costs nothing while requests
        # are being refused, and a trace still receiving spans may be about to show its run.
        evicted_spans = 0
        runless = self._runless
        while runless and reason is not None:
            evicted_spans += self._let_go(*runless.popitem(last=False))
            reason = self.over_limit()
        _count_let_go(self._metrics, evicted_spans, "no_run_evicted", "the buffer was full")
        return reason

    def _let_go(self, key: bytes, trace: BufferedTrace) -> int:
        """Free a trace that has no run span; how many spans it held. Its run span may still
        come, alone: scored without its children, the run would fail tool checks falsely, so
        the trace is remembered as decided and that span counts as late. It is counted as a
        trace in which no run was found."""
        if self._runless_traces is not None:
            self._runless_traces.add(_root_scope(trace.spans))
        self._free(trace.spans)
        self._decided.remember(key)
        return len(trace.spans)

    def admit(self, result: Scan) -> int:
        """Take out of `result` the traces that would pass a limit once buffered (new traces past
        `max_traces`, spans past `max_spans`, bytes past `max_bytes`), in request order: one
        request can no longer carry the buffers past their limits. Returns how many spans were
        taken out; the rest of the request is kept."""
        groups = result.groups
        kept = sum(len(group) for group in groups.values())
        if not kept:
            return 0
        room = _Headroom(
            self.limits, self.buffered_traces, self.buffered_spans, self.buffered_bytes + self.reading_bytes
        )
        if room.fits(len(groups), kept, result.batch.size):
            return 0  # the common case: all of it fits
        per_span = result.batch.size / kept
        dropped = 0
        for trace_id in list(groups):
            if trace_id in self._decided:
                continue  # late spans are counted, never buffered
            count = len(groups[trace_id])
            new = int(trace_id not in self._traces and trace_id not in self._runless)
            if room.fits(new, count, count * per_span):
                room.take(new, count, count * per_span)
            else:
                dropped += result.take_out(trace_id)
        if dropped and not result.detached:
            detach(result)  # what was taken out must not stay in memory with the rest
        return dropped

    def is_decided(self, trace_id: bytes) -> bool:
        return trace_id in self._decided

    def commit(self, result: Scan) -> list[OtlpSpan]:
        """Buffer a scanned request's sampled spans. Returns the run spans of traces already
        decided (late), which will not be scored."""
        now = self._clock()
        traces = self._traces
        late_runs: list[OtlpSpan] = []
        late = 0
        for trace_id, spans in result.groups.items():
            if trace_id in self._decided:
                late += len(spans)
                late_runs.extend(result.runs.get(trace_id, ()))
                late_runs.extend(result.named_runs.get(trace_id, ()))
                continue
            trace = traces.get(trace_id)
            if trace is None:
                trace = self._runless.pop(trace_id, None)
                if trace is None:
                    trace = BufferedTrace(trace_id, now, now)
                trace.last_seen = now
                traces[trace_id] = trace
            else:
                trace.last_seen = now
                traces.move_to_end(trace_id)
            trace.spans.extend(spans)
            runs = result.runs.get(trace_id)
            if runs:
                trace.run_spans.extend(runs)
            kind = result.kinds.get(trace_id)
            if kind is not None:
                trace.kind = max(kind, trace.kind)
                trace.named_runs.extend(result.named_runs.get(trace_id, ()))
            self.buffered_spans += len(spans)
            self.retain(result.batch, len(spans))
        if late:
            self._metrics.late_spans.add(late)
        return late_runs

    def poll(self) -> None:
        """Move every trace that is due to the ready queue; let go of run-less ones past max wait."""
        now = self._clock()
        traces = self._traces
        quiet_before = now - self._decision_wait_s
        while traces:
            key, trace = next(iter(traces.items()))
            if trace.last_seen > quiet_before:
                break
            del traces[key]
            if trace.opens_run:
                self._make_ready(trace)
            else:
                self._runless[key] = trace
        runless = self._runless
        expired_before = now - self._max_wait_s
        expired_spans = unread_spans = 0
        while runless:
            key, trace = next(iter(runless.items()))
            if trace.last_seen > expired_before:
                break
            del runless[key]
            if trace.kind:  # a vocabulary may be inferred from it
                self._make_ready(trace)
            elif not self._join_calls:
                expired_spans += self._let_go(key, trace)
            elif holds_convention_span(trace.spans):
                self._make_ready(trace)
            else:
                unread_spans += self._let_go(key, trace)
        _count_let_go(self._metrics, expired_spans, "no_run_span", "no run span came within max_wait_s")
        _count_let_go(
            self._metrics,
            unread_spans,
            "no_run_span",
            "no run span came within max_wait_s, and no span an instrumentation convention reads",
        )
        # A trace that never goes quiet is due max_wait_s after its first span; it is not at the
        # front, so look for such traces once in a while.
        if now - self._last_full_scan >= min(1.0, self._max_wait_s / 4):
            self._last_full_scan = now
            deadline = now - self._max_wait_s
            for key in [key for key, trace in traces.items() if trace.first_seen <= deadline]:
                trace = traces.pop(key)
                if trace.opens_run:
                    self._make_ready(trace)
                else:
                    self._runless[key] = trace

    def _make_ready(self, trace: BufferedTrace) -> None:
        self._decided.remember(trace.key)
        self._ready.append(trace)
        self.ready_traces += 1

    def drain(self) -> None:
        """At shutdown: every trace with a run span is ready now; the rest are let go (counted)."""
        runless_spans = 0
        for trace in self._traces.values():
            if trace.opens_run:
                self._make_ready(trace)
            else:
                runless_spans += len(trace.spans)
                self._free(trace.spans)
        for trace in self._runless.values():
            runless_spans += len(trace.spans)
            self._free(trace.spans)
        if runless_spans:
            self._metrics.dropped_spans.add(runless_spans, {REASON: "no_run_span"})
        self._traces.clear()
        self._runless.clear()

    def take_ready(self) -> BufferedTrace | None:
        if not self._ready:
            return None
        self.ready_traces -= 1
        return self._ready.popleft()

    def release(self, trace: BufferedTrace) -> None:
        """A ready trace was scored (or dropped): its spans no longer count."""
        self._free(trace.spans)
        trace.spans = []
        trace.run_spans = []
        trace.named_runs = []

    def _free(self, spans: Iterable[OtlpSpan]) -> None:
        count = 0
        for item in spans:
            count += 1
            self.unretain(item.origin.batch)
        self.buffered_spans -= count
