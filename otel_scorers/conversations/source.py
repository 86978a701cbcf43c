"""`Conversations`: the conversation stage as a pipeline plugs it in.

Wherever runs are rebuilt (the processor's engine, the sidecar's scoring side, backfill), each
run that names a conversation becomes a `Turn`: kept in this process's stage when it scores
conversations here, and sent as an OTLP log record (`turn_logs`) when `turn_records` is on, for
the sidecar that the Collector routes the conversation to.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from otel_scorers.conversation_turns import Turn, turn_of
from otel_scorers.conversations.counts import ConversationCounts
from otel_scorers.conversations.scheduler import ConversationScheduler
from otel_scorers.conversations.scoring import ConversationBinding, widest
from otel_scorers.conversations.stage import (
    AtShutdown,
    Clock,
    ConversationSampler,
    ConversationStage,
    StageLimits,
)
from otel_scorers.conversations.turn_logs import TurnLogWriter
from otel_scorers.emission import Emission
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.model import AgentRun
from otel_scorers.pipeline.runner import FLUSH_TIMEOUT_S, Runner
from otel_scorers.selection.filters import Predicate
from otel_scorers.throttled_log import throttled

if TYPE_CHECKING:
    from opentelemetry._logs import LoggerProvider


@dataclass(frozen=True, slots=True)
class ConversationSettings:
    """What the `conversations:` section of the config file says.

    `bindings`: the conversation scorers to run here (none: this process only sends turn
    records). `end_when`: a filter (the run-level filter language) that, true for a run, ends its
    conversation after it. `turn_records`: send each turn as an OTLP log record."""

    bindings: tuple[ConversationBinding, ...] = ()
    limits: StageLimits = field(default_factory=StageLimits)
    end_when: Predicate | None = None
    at_shutdown: AtShutdown = "score"
    turn_records: bool = False
    tick_s: float = 1.0
    clock: Clock = field(default=time.monotonic, compare=False)


class Conversations:
    """`keep`: keep turns and score conversations in this process (default: when there are
    bindings), their scores through `emission` (the run scores' own), on `host`'s loop (the
    runner that scores the runs; without one, a runner of the scheduler's own). `send`: send each
    turn as a log record (default: `settings.turn_records`). A sidecar's scoring side only sends;
    its receiving side only keeps, the turns the Collector routed to it. Turn records go out
    only for conversations some binding samples (all, without bindings)."""

    def __init__(
        self,
        settings: ConversationSettings,
        metrics: PipelineMetrics,
        emission: Emission | None = None,
        logger_provider: LoggerProvider | None = None,
        *,
        host: Runner[Any] | None = None,
        keep: bool | None = None,
        send: bool | None = None,
    ) -> None:
        self.settings = settings
        self.sampler = widest(settings.bindings) if settings.bindings else ConversationSampler(1.0)
        self.scheduler: ConversationScheduler | None = None
        #: What became of conversations and turns; only where they are kept (one per pipeline).
        self.counts: ConversationCounts | None = None
        if settings.bindings if keep is None else keep:
            if emission is None:
                raise ValueError("conversations kept in this process need the emission their scores go to")
            self.counts = ConversationCounts(metrics)
            stage = ConversationStage(settings.limits, self.sampler, settings.clock, self._counted)
            metrics.observe_count(
                "otel_scorers.conversations.open",
                "{conversation}",
                "Conversations kept open, waiting for their end.",
                lambda: stage.open_count,
            )
            self.scheduler = ConversationScheduler(
                stage,
                settings.bindings,
                emission,
                self.counts,
                host,
                tick_s=settings.tick_s,
                at_shutdown=settings.at_shutdown,
            )
        sending = settings.turn_records if send is None else send
        self.writer = TurnLogWriter(logger_provider) if sending else None

    def _counted(self, outcome: str, amount: int) -> None:
        if self.counts is not None:
            self.counts.add(outcome, amount)
        if outcome == "evicted":
            limits = self.settings.limits
            throttled.warning(
                "conversation_evicted",
                "otel_scorers: open conversations over their limits (max_open %d, max_bytes %d); "
                "evicting the least recently active ones unscored",
                limits.max_open,
                limits.max_bytes,
            )

    def turn(self, run: AgentRun) -> Turn | None:
        end_when = self.settings.end_when
        ends = False
        if end_when is not None and run.conversation_id:
            try:
                ends = bool(end_when(run))
            except Exception:  # a user's callable predicate: a failure ends nothing
                ends = False
        return turn_of(run, ends)

    def add_runs(self, runs: Sequence[AgentRun]) -> None:
        """The runs just rebuilt (on the engine's thread): their turns, kept and/or sent."""
        for run in runs:
            turn = self.turn(run)
            if turn is None:
                continue
            if self.writer is not None and self.sampler.sampled(turn.conversation_id):
                self.writer.emit(turn)
            if self.scheduler is not None:
                self.scheduler.add(turn)

    def add_turns(self, turns: Sequence[Turn]) -> None:
        """Turns that arrived as log records (the sidecar's conversation intake)."""
        if self.scheduler is not None:
            self.scheduler.add_all(turns)

    def poll(self) -> int:
        return self.scheduler.poll() if self.scheduler is not None else 0

    def flush(self, timeout_s: float = FLUSH_TIMEOUT_S) -> bool:
        return self.scheduler.flush(timeout_s) if self.scheduler is not None else True

    def shutdown(self, timeout_s: float = FLUSH_TIMEOUT_S) -> None:
        if self.scheduler is not None:
            self.scheduler.shutdown(timeout_s)
