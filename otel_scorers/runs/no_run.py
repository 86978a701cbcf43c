"""Traces in which no run was found: counted by the scope of their root span, and said once.

An agent traced by an instrumentation no reader knows gives no run and so no score; without this,
nothing would say so. Both doors count such traces (`PipelineMetrics.runless_traces`) by the
instrumentation scope of the trace's root span, and log once per scope where to look. The scopes
are a bounded label set: past `MAX_SCOPES`, the others are counted as `other`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from otel_scorers.fork_safety import renew_in_child
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.model import AgentRun
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanRecord

logger = logging.getLogger("otel_scorers")

MAX_SCOPES = 32
OTHER = "other"
#: The label of a root span whose tracer was given no name.
NO_SCOPE = "(none)"


class RunlessTraces:
    """Counts traces without a run, by their root span's scope; logs each scope's first one."""

    def __init__(self, metrics: PipelineMetrics, max_scopes: int = MAX_SCOPES) -> None:
        self._tally = metrics.runless_traces
        self._max_scopes = max_scopes
        self._scopes: dict[str, None] = {}
        self._lock = threading.Lock()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        self._lock = threading.Lock()

    def add(self, scope: str | None, amount: int = 1) -> None:
        name = scope or NO_SCOPE
        with self._lock:
            first = name not in self._scopes
            if first and len(self._scopes) < self._max_scopes:
                self._scopes[name] = None
            label = name if name in self._scopes else OTHER
        self._tally.add(amount, label)
        if first and label != OTHER:
            logger.warning(
                "otel_scorers: a trace whose root span is from instrumentation scope %r held no agent run "
                "that a reader knows, so nothing in it was scored (counted in otel_scorers.traces.no_run). "
                "If its spans are an agent's: `otel-scorers runs --explain FILE` on an exported trace shows "
                "what each reader read, and a `conventions:` entry (docs/conventions.md) describes an "
                "instrumentation. Said once per scope.",
                name,
            )

    def add_trace(self, spans: Sequence[SpanRecord]) -> None:
        """A trace of these spans gave no run: counted under its root span's scope."""
        self.add(root_scope(spans))


def root_scope(spans: Sequence[SpanRecord]) -> str | None:
    """The scope of the trace's root span; of its earliest top span when the root is not among them."""
    ids = {span.span_id for span in spans}
    tops = [span for span in spans if span.parent_span_id is None or span.parent_span_id not in ids]
    root = next((span for span in tops if span.parent_span_id is None), None)
    if root is None:
        root = min(tops, key=lambda span: span.start_ns, default=None)
    return root.scope if root is not None else None


def trace_runs(spans: Sequence[SpanRecord], runless: RunlessTraces | None) -> list[AgentRun]:
    """The runs built from one trace's spans, for either door; a trace that gives none (a span
    looked like a run's start, yet no reader found one) is counted in `runless`."""
    runs = build_runs(spans)
    if not runs and runless is not None:
        runless.add_trace(spans)
    return runs
