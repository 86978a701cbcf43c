"""Where scores go: a fan-out of outputs, each with `emit`, `emit_conversation`, `flush` and
`behind`, as a Collector pipeline fans out to its exporters. The pipeline and the conversation
lane see only `Emission`; adding an output is a new class and a line in the registry of outputs
(`standard.OUTPUTS`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from otel_scorers.conversation_turns import Conversation
from otel_scorers.model import AgentRun, Score
from otel_scorers.throttled_log import throttled


class ScoreOutput(Protocol):
    """Receives each run's scores on the scoring thread (never an agent's)."""

    def emit(self, run: AgentRun, scores: Sequence[Score]) -> None:
        """Record or send the run's scores; called only with at least one score."""

    def emit_conversation(self, conversation: Conversation, scores: Sequence[Score]) -> None:
        """Record or send an ended conversation's scores (`attributes.conversation_attributes`,
        linked to its turns' runs where the output can link); at least one score."""

    def flush(self) -> None:
        """Pass on what is held back for a batch (the pipeline calls this at the end of a burst)."""

    def behind(self) -> bool:
        """True while sending lags so far that more scores would be dropped: scoring waits."""


#: A point between two pieces of an output's work on the engine's thread, holding nothing another
#: thread needs, where the engine may give the GIL to a host thread (`HostYield`).
SafePoint = Callable[[], None]


@runtime_checkable
class YieldingOutput(Protocol):
    """An output whose emission is many pieces of work (a span and an event per score, a batch
    of histogram measurements): it calls the engine's safe point between them, so that no one
    emission holds the GIL for long while an agent's thread waits for it."""

    def yield_with(self, safe_point: SafePoint) -> None:
        """Call `safe_point` between the pieces of the work done on the engine's thread."""


class Emission:
    """The run's scores to every output, in order. An output that fails is logged (throttled)
    and the others still receive the scores."""

    def __init__(self, outputs: Sequence[ScoreOutput]) -> None:
        self.outputs = tuple(outputs)

    def yield_with(self, safe_point: SafePoint) -> None:
        """The engine's safe point, handed to the outputs that take one (`YieldingOutput`)."""
        for output in self.outputs:
            if isinstance(output, YieldingOutput):
                output.yield_with(safe_point)

    def emit(self, run: AgentRun, scores: Sequence[Score]) -> None:
        if not scores:
            return
        for output in self.outputs:
            try:
                output.emit(run, scores)
            except Exception:
                _failed(output, "emit scores")

    def emit_conversation(self, conversation: Conversation, scores: Sequence[Score]) -> None:
        if not scores:
            return
        for output in self.outputs:
            try:
                output.emit_conversation(conversation, scores)
            except Exception:
                _failed(output, "emit a conversation's scores")

    def flush(self) -> None:
        for output in self.outputs:
            try:
                output.flush()
            except Exception:
                _failed(output, "flush")

    def behind(self) -> bool:
        # A loop rather than `any` over a generator: asked before every job the engine takes.
        for output in self.outputs:  # noqa: SIM110
            if output.behind():
                return True
        return False


def _failed(output: ScoreOutput, what: str) -> None:
    name = type(output).__name__
    throttled.warning(f"{what}:{name}", "otel_scorers: %s failed to %s", name, what, exc_info=True)
