"""Where scores go: a fan-out of outputs, each with `emit`, `flush` and `behind`, as a Collector
pipeline fans out to its exporters. The pipeline sees only `Emission`; adding an output is a new
class in this package and a line where the outputs are chosen (`standard.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from otel_scorers.model import AgentRun, Score
from otel_scorers.throttled_log import throttled


class ScoreOutput(Protocol):
    """Receives each run's scores on the scoring thread (never an agent's)."""

    def emit(self, run: AgentRun, scores: Sequence[Score]) -> None:
        """Record or send the run's scores; called only with at least one score."""

    def flush(self) -> None:
        """Pass on what is held back for a batch (the pipeline calls this at the end of a burst)."""

    def behind(self) -> bool:
        """True while sending lags so far that more scores would be dropped: scoring waits."""


class Emission:
    """The run's scores to every output, in order. An output that fails is logged (throttled)
    and the others still receive the scores."""

    def __init__(self, outputs: Sequence[ScoreOutput]) -> None:
        self.outputs = tuple(outputs)

    def emit(self, run: AgentRun, scores: Sequence[Score]) -> None:
        if not scores:
            return
        for output in self.outputs:
            try:
                output.emit(run, scores)
            except Exception:
                throttled.warning(
                    f"emit:{type(output).__name__}",
                    "otel_scorers: %s failed to emit scores",
                    type(output).__name__,
                    exc_info=True,
                )

    def flush(self) -> None:
        for output in self.outputs:
            try:
                output.flush()
            except Exception:
                throttled.warning(
                    f"flush:{type(output).__name__}",
                    "otel_scorers: %s failed to flush",
                    type(output).__name__,
                    exc_info=True,
                )

    def behind(self) -> bool:
        return any(output.behind() for output in self.outputs)
