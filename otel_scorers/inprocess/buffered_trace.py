"""A trace the in-process assembler buffers (`BufferedTrace`), and what it hands the engine when
its last open run ends (`CompletedTrace`)."""

from __future__ import annotations

from typing import NamedTuple

from opentelemetry.sdk.trace import ReadableSpan

from otel_scorers.span_record import SpanRecord, from_readable_span


class BufferedTrace:
    """A buffered trace. A plain slotted class, not a dataclass with default factories: one is
    made on the agent's thread for every run, and literals build its containers faster."""

    __slots__ = (
        "created",
        "ended_runs",
        "handoffs",
        "marked_late",
        "open_runs",
        "spans",
        "started",
        "waiting_until",
    )

    def __init__(self, created: float) -> None:
        self.created = created
        self.spans: list[ReadableSpan] = []
        self.open_runs: set[int] = set()
        self.ended_runs: list[int] = []
        self.started: dict[int, ReadableSpan] = {}
        #: Handoff spans (`may_hand_off`) started since the trace's last run started.
        self.handoffs: list[int] = []
        #: While every run has ended and a handoff waits to be taken up: until when (monotonic).
        self.waiting_until: float | None = None
        #: Opened at a run marked after it started: a run around it may have been too, so the
        #: trace waits for its root in this process to end (`run_marked_late`).
        self.marked_late = False

    def run_marked_late(self, span_id: int, run: ReadableSpan) -> None:
        """`run`, open, is a run whose marker was written after it started (`late_marks`)."""
        self.open_runs.add(span_id)
        self.started[span_id] = run
        self.marked_late = True

    def completed(self) -> CompletedTrace:
        return CompletedTrace(self.spans, tuple(self.started.values()), tuple(self.ended_runs))


class CompletedTrace(NamedTuple):
    """The last open run span of a trace ended: the spans the trace buffered, those still open,
    and the spans that opened runs (in the order they ended).

    A NamedTuple rather than a frozen dataclass: it is made on the agent's thread, and a tuple is
    built several times faster."""

    spans: list[ReadableSpan]
    unfinished: tuple[ReadableSpan, ...]
    run_span_ids: tuple[int, ...]

    def span_records(self) -> list[SpanRecord]:
        # The project's own spans may be among them (evaluation spans of an earlier run, ended
        # in the buffer): `build_runs` leaves them out, cheaper there than on the agent's thread.
        records = [from_readable_span(span) for span in self.spans]
        records.extend(from_readable_span(span) for span in self.unfinished)
        return records
