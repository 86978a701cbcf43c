"""A ready trace as a job for the `ScoringEngine`: converted to `SpanRecord`s on the engine's thread."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from otel_scorers.engine import ScoredRun
from otel_scorers.model import AgentRun
from otel_scorers.run_builder import build_runs
from otel_scorers.sidecar.assembler import PendingTrace
from otel_scorers.sidecar.otlp_spans import OtlpSpan

#: Called once per job, with the scored runs, or None when the job was dropped.
Done = Callable[[PendingTrace, "Sequence[ScoredRun] | None"], None]


def run_subtrees(spans: Sequence[OtlpSpan], run_spans: Sequence[OtlpSpan]) -> list[OtlpSpan]:
    """The run spans and their descendants: the only spans a run is built from. Reads ids only."""
    inside: dict[bytes, bool] = {item.span.span_id: True for item in run_spans}
    parents: dict[bytes, bytes] = {item.span.span_id: item.span.parent_span_id for item in spans}
    chosen: list[OtlpSpan] = []
    for item in spans:
        span_id = item.span.span_id
        path: list[bytes] = []
        found = False
        current: bytes | None = span_id
        while current:
            known = inside.get(current)
            if known is not None:
                found = known
                break
            path.append(current)
            current = parents.get(current)
            if len(path) > 10_000:  # a cycle of bad parent ids
                break
        for visited in path:
            inside[visited] = found
        if found:
            chosen.append(item)
    return chosen


@dataclass(frozen=True, slots=True)
class TraceJob:
    trace: PendingTrace
    done: Done

    def build(self) -> Sequence[AgentRun]:
        spans = run_subtrees(self.trace.spans, self.trace.run_spans)
        return build_runs([item.record() for item in spans])

    def finished(self, results: Sequence[ScoredRun]) -> None:
        self.done(self.trace, results)

    def dropped(self, reason: str) -> None:
        self.done(self.trace, None)
