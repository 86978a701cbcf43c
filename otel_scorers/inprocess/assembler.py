"""In-process trace assembly: buffer the spans of traces that contain an open agent run.

A trace is buffered only from the moment a span that may open a run starts in it (a run span
by its name or start attributes; or, for instrumentations that only label a run when it ends,
the first span of their instrumentation scope; or, for a run whose marker was written after its
span started, the first span starting inside it that carries a marker's key: its parent is
looked at then), and only if some binding's sampling rate could pick its trace id. Each span that ends in a buffered trace is appended (a reference, not a copy).
When the last open run span of the trace ends, a `CompletedTrace` hands the buffer to the engine,
which builds every run in it, nested ones included. Memory is bounded by `max_traces` and
`max_spans_per_trace`; what does not fit is counted.

One exception: a run that handed the conversation on through a handoff whose next run starts
only after it ended (AutoGen's Swarm, `Convention.handoff_start_names`). Its trace waits, still
buffering, for the run handed to; when that run starts and ends, the trace completes with both.
A trace whose handoff is not taken up within `handoff_wait_s` is completed as it is by
`complete_expired`, which the engine's thread calls (the agent's thread never waits for it).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan

from otel_scorers.conventions import may_hand_off, may_start_run
from otel_scorers.environment import MAX_SPANS_PER_TRACE, MAX_TRACES
from otel_scorers.fork_safety import renew_in_child
from otel_scorers.inprocess.buffered_trace import BufferedTrace, CompletedTrace
from otel_scorers.inprocess.invalid_ids import left_out
from otel_scorers.inprocess.late_marks import marked_parent, marked_parent_in
from otel_scorers.inprocess.runless_roots import count_runless
from otel_scorers.inprocess.waiting_traces import WaitingTraces
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.runs.no_run import RunlessTraces
from otel_scorers.span_record import OWN_SCOPE
from otel_scorers.throttled_log import throttled

logger = logging.getLogger("otel_scorers")

#: How long a trace whose last run handed the conversation on waits for the next run to start.
HANDOFF_WAIT_S = 3.0


class TraceAssembler(WaitingTraces):
    def __init__(
        self,
        could_sample: Callable[[int], bool],
        on_completed: Callable[[CompletedTrace], None],
        metrics: PipelineMetrics,
        on_run_span_ended: Callable[[ReadableSpan], None] | None = None,
        max_traces: int = MAX_TRACES,
        max_spans_per_trace: int = MAX_SPANS_PER_TRACE,
        max_trace_age_s: float = 900.0,
        handoff_wait_s: float = HANDOFF_WAIT_S,
        runless: RunlessTraces | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`clock`: what the trace ages and handoff waits are measured by (a test's fake clock)."""
        self.clock = clock
        self._could_sample = could_sample
        self._on_completed = on_completed
        self._on_run_span_ended = on_run_span_ended
        self._metrics = metrics
        self._max_traces = max_traces
        self._max_spans = max_spans_per_trace
        self._max_age_s = max_trace_age_s
        self._handoff_wait_s = handoff_wait_s
        self._traces: dict[int, BufferedTrace] = {}
        #: Traces whose runs have all ended while a handoff waits to be taken up.
        self._waiting: dict[int, BufferedTrace] = {}
        #: Recent traces completed before their handoff was taken up (a run starting in one is late).
        self._given_up: OrderedDict[int, None] = OrderedDict()
        self._last_eviction_scan = float("-inf")
        self._lock = threading.Lock()
        #: (span context, scope) of root spans ended in traces not buffered, for the engine's thread
        #: to count those without a run (`count_runless`; the trace id read there, not on the
        #: agent's thread); bounded: when it is full, the oldest are let go uncounted.
        self._ended_roots: deque[tuple[Any, Any]] = deque(maxlen=max_traces)
        #: Traces in which a run started, most recent last (as many as `max_traces`); ordered to let
        #: the oldest go in constant time (a dict walks its popped slots: docs/performance.md).
        self._had_run: OrderedDict[int, None] = OrderedDict()
        self._runless = runless
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        # The open runs buffered here belong to the parent's threads, which the child has not.
        self._lock = threading.Lock()
        self._traces = {}
        self._waiting = {}
        self._given_up = OrderedDict()
        self._ended_roots.clear()
        self._had_run = OrderedDict()

    @property
    def buffered_traces(self) -> int:
        return len(self._traces)

    def on_start(self, span: ReadableSpan, parent_context: Any = None) -> None:
        """Called by the SDK on the agent's thread: a dictionary lookup and a run check for spans
        outside runs, never an exception."""
        try:
            # The SDK span's fields past its properties, for every span: `span.attributes` wraps the
            # locked `BoundedAttributes` in a proxy whose missed lookup raises and catches KeyError.
            try:
                context: Any = span._context  # type: ignore[attr-defined]
                name: str = span._name  # type: ignore[attr-defined]
                attributes: Any = span._attributes._dict  # type: ignore[attr-defined,union-attr]
                scope: str | None = span._instrumentation_scope._name  # type: ignore[attr-defined,union-attr]
            except AttributeError:
                context = span.context
                name = span.name
                attributes = span.attributes
                scope = _scope_name(span)
            if scope == OWN_SCOPE:
                # An evaluation span names the run's agent but is no run: in a trace whose later
                # run is still open, it would be taken for a run of that trace, and held with it.
                return
            # A SpanContext is a tuple (trace id, span id, ...): indexing it skips two properties.
            trace_id: int = context[0]
            traces = self._traces
            buffer = traces.get(trace_id) if traces else None  # nothing buffered: no lookup
            if buffer is None:
                # A trace's first run: its instrumentation scope may be what says so.
                starts = may_start_run(name, attributes, scope)
                if starts is False:
                    return
                # A run's step, or a run: its parent may be a run marked after it started.
                self._parent_marked(parent_context, trace_id)
                if (
                    starts is None
                    or not self._could_sample(trace_id)
                    or left_out(self._metrics, context, name)
                ):
                    return
                buffer = self._open(trace_id)
                if buffer is None:
                    return
                span_id: int = context[1]
                buffer.open_runs.add(span_id)
            else:
                span_id = context[1]
                starts = may_start_run(name, attributes)
                if starts is not False:  # its parent may be a run marked after it started
                    buffer = self._parent_run_started(buffer, trace_id, span)
                if starts:
                    invalid = left_out(self._metrics, context, name)  # never started, as a run
                    buffer = None if invalid else self._run_started(buffer, trace_id, span_id)
                    if buffer is None:
                        return
                elif may_hand_off(name):
                    buffer.handoffs.append(span_id)
            buffer.started[span_id] = span
        except Exception:  # never into the agent
            logger.debug("otel_scorers: on_start failed", exc_info=True)

    def on_end(self, span: ReadableSpan) -> bool:
        """Called by the SDK on the agent's thread. True for a span that opened a run (it goes to
        the engine with its trace), the trace handed to `on_completed` after its last open one."""
        try:
            traces = self._traces
            if not traces:  # nothing buffered: the common case outside agent runs
                # A trace's root in this process (no parent, or a remote one: a SpanContext is a
                # tuple whose third item says remote) is noted for `count_runless`.
                parent: Any = span._parent
                if parent is None or parent[2]:
                    self._ended_roots.append((span._context, span._instrumentation_scope))  # type: ignore[attr-defined]
                return False
            try:
                context: Any = span._context  # type: ignore[attr-defined]  # past the property
            except AttributeError:
                context = span.context
            trace_id: int = context[0]
            buffer = traces.get(trace_id)
            if buffer is None:
                parent = span._parent
                if parent is None or parent[2]:
                    self._ended_roots.append((context, span._instrumentation_scope))  # type: ignore[attr-defined]
                return False
            span_id: int = context[1]
            if not context[5] and left_out(self._metrics, context, span._name):  # `is_valid`
                return False
            if buffer.started.pop(span_id, None) is None and _scope_name(span) == OWN_SCOPE:
                # An evaluation span of an earlier run of the trace (`on_start` leaves them out):
                # no part of the user's trace, it takes no place among the spans buffered for it.
                return False
            is_run = span_id in buffer.open_runs
            if is_run or len(buffer.spans) < self._max_spans:
                buffer.spans.append(span)
            else:
                _span_limit_reached(self._metrics, self._max_spans)
            if not is_run:
                if buffer.marked_late and (span._parent is None or span._parent[2]):
                    self._root_ended(trace_id, buffer)
                return False
            if self._on_run_span_ended is not None:
                self._on_run_span_ended(span)  # before the trace can reach the engine
            with self._lock:
                buffer.open_runs.discard(span_id)
                buffer.ended_runs.append(span_id)
                if buffer.open_runs:
                    return True
                if (buffer.handoffs and _handoff_ended(buffer)) or (
                    buffer.marked_late and span._parent is not None and not span._parent[2]
                ):
                    # The agent handed to starts its run after this one, or a run around it
                    # marked after it started ends after it: keep the trace open.
                    buffer.waiting_until = self.clock() + self._handoff_wait_s
                    self._waiting[trace_id] = buffer
                    return True
                self._traces.pop(trace_id, None)
            self._on_completed(buffer.completed())
            return True
        except Exception:
            logger.debug("otel_scorers: on_end failed", exc_info=True)
            return False

    def count_runless(self) -> None:
        """Count the traces whose root span ended with no run started in them: called
        periodically on the engine's thread."""
        if self._ended_roots:
            count_runless(self._ended_roots, self._had_run, self._could_sample, self._runless)

    def _run_started(self, buffer: BufferedTrace, trace_id: int, span_id: int) -> BufferedTrace | None:
        """A run starts in a buffered trace (nested, or the one a handoff passed to): under the
        lock, because a waiting trace may be completed meanwhile off the agent's thread."""
        with self._lock:
            if self._traces.get(trace_id) is buffer:
                buffer.open_runs.add(span_id)
                buffer.handoffs.clear()  # taken up: this run goes on from the handoff
                buffer.waiting_until = None
                self._waiting.pop(trace_id, None)
                return buffer
        # Completed just now, its handoff given up: this run is a trace's first again.
        reopened = self._open(trace_id)
        if reopened is not None:
            reopened.open_runs.add(span_id)
        return reopened

    def _parent_marked(self, parent_context: Any, trace_id: int) -> None:
        """A run's step, or a run, starts in a trace not buffered: when its parent is a run by
        now (`late_marks`), the trace is buffered from here, that parent as its run."""
        found = marked_parent(parent_context, trace_id)
        if (
            found is None
            or not self._could_sample(trace_id)
            or left_out(self._metrics, found[0], found[1].name)
        ):
            return
        buffer = self._open(trace_id)
        if buffer is not None:
            buffer.run_marked_late(found[0].span_id, found[1])

    def _parent_run_started(self, buffer: BufferedTrace, trace_id: int, span: ReadableSpan) -> BufferedTrace:
        """A run's step, or a run, starts in a buffered trace: when its parent, open there and not
        yet a run, is one by now (`late_marks`), that run starts (`_run_started`)."""
        found = marked_parent_in(buffer.started, buffer.open_runs, span)
        started = self._run_started(buffer, trace_id, found[0]) if found is not None else None
        if found is None or started is None:
            return buffer
        started.started[found[0]] = found[1]
        return started

    def _open(self, trace_id: int) -> BufferedTrace | None:
        # A run starts in the trace: its root, ending, is not one without a run. (What `_remember`
        # does, written out: this runs on the agent's thread for every run.)
        had_run = self._had_run
        had_run[trace_id] = None
        if len(had_run) > self._max_traces:
            had_run.popitem(last=False)  # the oldest
        # Outside the lock: a single dict operation (the values are None, the default is not).
        if self._given_up and self._given_up.pop(trace_id, False) is None:
            _handoff_too_late(self._metrics, self._handoff_wait_s)
        with self._lock:
            buffer = self._traces.get(trace_id)
            if buffer is not None:
                return buffer
            now = self.clock()
            # The scan for stale traces walks them all: at most once a second, or a full buffer
            # would make every run start on the agent's thread pay for it.
            if len(self._traces) >= self._max_traces and now - self._last_eviction_scan >= 1.0:
                self._last_eviction_scan = now
                _evict_stale(self._traces, self._waiting, now, self._max_age_s, self._metrics)
            if len(self._traces) >= self._max_traces:
                self._metrics.run_outcome("dropped", "trace_buffer_full")
                throttled.warning(
                    "trace_buffer_full",
                    "otel_scorers: %d traces with open runs already buffered; not scoring a new run",
                    self._max_traces,
                )
                return None
            buffer = self._traces[trace_id] = BufferedTrace(now)
            return buffer


# The assembler's work off the agent's thread (the engine's) or on its rare paths (a trace given
# up on, a full buffer), as functions of the state the assembler hands them.


def _handoff_ended(buffer: BufferedTrace) -> bool:
    """Whether a handoff span of the trace ended inside the run that just ended (it is no longer
    open)."""
    started = buffer.started
    return any(span_id not in started for span_id in buffer.handoffs)


def _span_limit_reached(metrics: PipelineMetrics, max_spans: int) -> None:
    metrics.dropped_spans.add(1, {"otel_scorers.reason": "trace_span_limit"})
    throttled.warning(
        "trace_span_limit",
        "otel_scorers: a trace exceeded %d buffered spans; its runs will be scored on a partial view",
        max_spans,
    )


def _handoff_too_late(metrics: PipelineMetrics, handoff_wait_s: float) -> None:
    metrics.late_spans.add(1)
    throttled.warning(
        "handoff_given_up",
        "otel_scorers: an agent's run started in a trace already scored while it waited for a "
        "handoff (given up after %.1f s, or by a flush): it is scored as a run of its own",
        handoff_wait_s,
    )


def _evict_stale(
    traces: dict[int, BufferedTrace],
    waiting: dict[int, BufferedTrace],
    now: float,
    max_age_s: float,
    metrics: PipelineMetrics,
) -> None:
    """Drop (and count) the traces buffered longer than `max_age_s`: runs whose span never
    ended (a crashed task, say) must not hold memory forever."""
    stale = [trace_id for trace_id, buffer in traces.items() if now - buffer.created > max_age_s]
    for trace_id in stale:
        del traces[trace_id]
        waiting.pop(trace_id, None)
    if stale:
        metrics.run_outcome("dropped", "run_never_ended", len(stale))


def _scope_name(span: ReadableSpan) -> str | None:
    try:
        return span._instrumentation_scope._name  # type: ignore[attr-defined,union-attr,no-any-return]
    except AttributeError:
        scope = span.instrumentation_scope
        return scope.name if scope is not None else None
