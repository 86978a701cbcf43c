"""Traces read from files, held until their runs can be built: a trace's runs are built once its
tree has closed (a root, and every span's parent) or it has gone idle, and its spans are let go
then. What is held is bounded in spans and in bytes, whatever the files hold: a file whose traces
never close (each rooted under a remote parent, as a service called by another writes them) is
built as it is read, not held to its end."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from otel_scorers.human_text import counted
from otel_scorers.model import AgentRun
from otel_scorers.runs.call_chains import CallChains
from otel_scorers.runs.handed_traces import HandedTraces
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.runs.span_roles import span_roles
from otel_scorers.span_record import SpanRecord

#: A trace that got no span in this many spans read is taken as complete (by file position, as
#: files carry no arrival times): its runs are built and its spans let go.
TRACE_IDLE_SPANS = 50_000
#: Most spans held at once waiting for their traces to complete; beyond, the least recently
#: added-to traces are built as they are. Memory stays bounded whatever the files' size.
MAX_BUFFERED_SPANS = 200_000
#: Most bytes of JSON (the spans' share of the lines they were read from) held at once waiting
#: for their traces to complete; beyond, the least recently added-to traces are built as they
#: are. Spans of a few bytes meet `MAX_BUFFERED_SPANS` first; spans carrying messages of
#: kilobytes meet this (200,000 spans of 20 kB would otherwise be 4 GB).
MAX_BUFFERED_BYTES = 128 * 1024 * 1024
#: Traces whose runs were built, remembered (the most recent) to count a span that comes later.
_RELEASED_KEPT = 65_536
#: Spans read between two looks for traces to build; a trace whose tree has closed is built at
#: the first look after a whole stretch without a span of it, so a trace written root first is
#: not built at its first closed moment while the rest of its spans are still coming.
CHECK_EVERY_SPANS = 1024


@dataclass
class Reading:
    """What the files held: spans, the traces they make, the agent runs rebuilt from them."""

    spans: int = 0
    traces: int = 0
    runs: int = 0
    #: Spans read after their trace's runs were built (`TRACE_IDLE_SPANS` or more spans later,
    #: or their trace let go early to stay within `MAX_BUFFERED_SPANS` or `MAX_BUFFERED_BYTES`).
    late_spans: int = 0
    #: Traces whose spans could not be read into runs (none of their runs given), and the first.
    unbuilt: int = 0
    first_unbuilt: str = ""

    def nothing_read(self, paths: Iterable[Path]) -> str | None:
        """Why the files gave nothing to work on, or None when they held runs."""
        names = ", ".join(str(path) for path in paths)
        if self.spans == 0:
            return f"no spans were read from {names}"
        if self.runs == 0:
            return (
                f"read {counted(self.spans, 'span')} in {counted(self.traces, 'trace')} from {names}, none of them an agent "
                "run (what marks one, per instrumentation: docs/conventions.md)"
            )
        return None


@dataclass(slots=True)
class _Trace:
    """The spans of one trace read so far, and whether its tree has closed: a root seen, and the
    parent of every span among its spans."""

    last_seen: int
    spans: list[SpanRecord] = field(default_factory=list)
    ids: set[int] = field(default_factory=set)
    awaited: set[int] = field(default_factory=set)
    rooted: bool = False
    size: int = 0

    def add(self, span: SpanRecord, size: int) -> None:
        self.spans.append(span)
        self.size += size
        self.ids.add(span.span_id)
        self.awaited.discard(span.span_id)
        parent = span.parent_span_id
        if parent is None:
            self.rooted = True
        elif parent not in self.ids:
            self.awaited.add(parent)

    @property
    def complete(self) -> bool:
        return self.rooted and not self.awaited


class OpenTraces:
    """The traces being read, least recently added-to first, each held until its tree closes or
    it goes idle, and never more than `MAX_BUFFERED_SPANS` spans nor `MAX_BUFFERED_BYTES` bytes
    at once."""

    def __init__(self, reading: Reading) -> None:
        self.reading = reading
        self.traces: OrderedDict[int, _Trace] = OrderedDict()
        #: Traces seen complete and not yet built: checked at each look (a late batch may reopen).
        self.closed: dict[int, None] = {}
        self.buffered = 0
        self.buffered_bytes = 0
        #: Traces already built, to count a span that comes after them.
        self.released: OrderedDict[int, None] = OrderedDict()
        #: Model calls of traces without a run, joined across traces into the runs they make.
        self.chains = CallChains()
        #: Traces whose run handed the conversation to an agent they do not run, held for its run.
        self.handed = HandedTraces()

    def add(self, span: SpanRecord, position: int, size: int) -> None:
        """Hold `span`, read as the `position`th span, `size` bytes of JSON."""
        trace = self.traces.get(span.trace_id)
        if trace is None:
            trace = self.traces[span.trace_id] = _Trace(position)
            if span.trace_id in self.released:
                self.reading.late_spans += 1  # built again with what comes of it now
            else:
                self.reading.traces += 1
        else:
            self.traces.move_to_end(span.trace_id)
            trace.last_seen = position
        trace.add(span, size)
        self.buffered += 1
        self.buffered_bytes += size
        if trace.complete:
            self.closed[span.trace_id] = None

    def _over(self) -> bool:
        return self.buffered > MAX_BUFFERED_SPANS or self.buffered_bytes > MAX_BUFFERED_BYTES

    def due(self, position: int) -> Iterator[AgentRun]:
        """The runs of the traces complete and quiet, idle, or the oldest beyond the buffer's
        bounds. Checked every `CHECK_EVERY_SPANS` spans (or when over a bound); a complete
        trace waits until a whole stretch passed without a span of it (its late batch, or the
        rest of a trace written root first)."""
        if not (position % CHECK_EVERY_SPANS == 0 or self._over()):
            return
        quiet_since = position - CHECK_EVERY_SPANS
        waiting: dict[int, None] = {}
        for trace_id in self.closed:
            trace = self.traces.get(trace_id)
            if trace is None or not trace.complete:
                continue
            if trace.last_seen > quiet_since:
                waiting[trace_id] = None
                continue
            yield from self._release(trace_id)
        self.closed = waiting
        while self.traces and (
            self._over() or next(iter(self.traces.values())).last_seen <= position - TRACE_IDLE_SPANS
        ):
            yield from self._release(next(iter(self.traces)))

    def rest(self) -> Iterator[AgentRun]:
        """The runs of every trace still held, once all files are read."""
        while self.traces:
            yield from self._release(next(iter(self.traces)))
        yield from self._counted(self.chains.rest())
        yield from self._counted(self.handed.rest())

    def _counted(self, runs: Iterator[AgentRun]) -> Iterator[AgentRun]:
        for run in runs:
            self.reading.runs += 1
            yield run

    def _release(self, trace_id: int) -> Iterator[AgentRun]:
        trace = self.traces.pop(trace_id)
        self.buffered -= len(trace.spans)
        self.buffered_bytes -= trace.size
        self.released[trace_id] = None
        if len(self.released) > _RELEASED_KEPT:
            self.released.popitem(last=False)
        try:
            runs = build_runs(trace.spans)
        except Exception as exc:  # spans no reader foresaw cost their own trace, not the others
            self.reading.unbuilt += 1
            self.reading.first_unbuilt = self.reading.first_unbuilt or f"trace {trace_id:032x}: {exc!r}"
            return
        if not runs:  # a run no span marks may be in its model calls, with other traces'
            yield from self._counted(self.chains.add(span_roles(trace.spans)))
            return
        yield from self._counted(self.handed.add(trace.spans, runs))
