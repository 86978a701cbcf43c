"""Conversation bindings and the pure function that scores one ended conversation with them.

A conversation binding samples by conversation (`ConversationSampler`: all of a conversation's
turns or none, the same in every process); its scorer is called, timed, labelled by its
threshold and turned into an error `Score` when it raises or does not finish in time by its
`Binding` (`pipeline.scorer_call.call`), the one implementation run scorers use too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any

from otel_scorers.conversation_turns import Conversation
from otel_scorers.conversations.stage import ConversationSampler
from otel_scorers.errors import ConfigError
from otel_scorers.model import AgentRun, Score, higher_is_worse
from otel_scorers.pipeline.scorer_call import call, label
from otel_scorers.pipeline.scoring_pipeline import gathered
from otel_scorers.scorers.conversation.protocol import ConversationScorer
from otel_scorers.scorers.evaluator_version import evaluator_version
from otel_scorers.scorers.protocol import Lane
from otel_scorers.selection.binding import DEFAULT_TIMEOUT_S, Binding
from otel_scorers.selection.sampling import DEFAULT_RATE, TraceIdSampler


@dataclass(frozen=True, slots=True)
class _Seat:
    """What a `Binding` reads of its scorer besides `score` (name, lane, needs, binary), for a
    conversation scorer: a conversation needs no run field and is labelled by its threshold
    only. Its scorer's `score` takes a conversation, called through `scorer_call.call`."""

    scorer: ConversationScorer
    lane: Lane
    needs: frozenset[str] = frozenset()
    binary: bool = False

    @property
    def name(self) -> str:
        return self.scorer.name

    @property
    def higher_is_worse(self) -> bool:
        """The conversation scorer's direction, which its threshold's label follows."""
        return higher_is_worse(self.scorer)

    def score(self, run: AgentRun) -> Any:
        raise TypeError(f"{self.scorer.name} scores conversations, not single runs")


@dataclass(frozen=True, slots=True)
class ConversationBinding:
    """A conversation scorer with its conversation sampler, and the `Binding` that calls it."""

    scorer: ConversationScorer
    sampler: ConversationSampler
    binding: Binding

    @property
    def name(self) -> str:
        return self.binding.name

    @property
    def threshold(self) -> float | None:
        return self.binding.threshold

    @property
    def timeout_s(self) -> float:
        return self.binding.timeout_s

    def label(self, value: float) -> str | None:
        """`pass` or `fail` against the threshold, in the scorer's direction; None without one."""
        return label(self.binding, value)

    @property
    def evaluator_version(self) -> str | None:
        return self.binding.evaluator_version

    def admits(self, conversation: Conversation) -> bool:
        return self.sampler.sampled(conversation.id)

    def evaluate(self, conversation: Conversation) -> Score | Awaitable[Score]:
        return call(self.binding, self.scorer.score, conversation)


def bind_conversation(
    scorer: ConversationScorer,
    *,
    name: str | None = None,
    sampling: float = DEFAULT_RATE,
    threshold: float | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> ConversationBinding:
    """A conversation scorer with its name, conversation-level sampling rate and threshold."""
    try:
        sampler = ConversationSampler(float(sampling))
    except ValueError as exc:
        raise ConfigError("sampling.rate", str(exc)) from None
    if not timeout_s > 0:
        raise ConfigError("timeout_s", f"must be a positive number of seconds, got {timeout_s}")
    seat = _Seat(scorer, "judge" if scorer.uses_judge else "async")
    # The trace-id sampler at the same rate gives each score its inclusion probability.
    binding = Binding(
        seat,
        name or scorer.name,
        TraceIdSampler(sampler.rate),
        threshold=threshold,
        timeout_s=timeout_s,
        evaluator_version=evaluator_version(scorer),
    )
    return ConversationBinding(scorer, sampler, binding)


def widest(bindings: Sequence[ConversationBinding]) -> ConversationSampler:
    """The sampler that keeps every conversation some binding samples."""
    return min(
        (binding.sampler for binding in bindings), key=lambda s: s.threshold, default=ConversationSampler(0.0)
    )


async def score_conversation(
    bindings: Sequence[ConversationBinding], conversation: Conversation
) -> list[Score]:
    """Score an ended conversation with each binding that samples it, the awaitable scorers
    concurrently (so judged ones meet in one batch when the judge batches)."""
    return await gathered(
        binding.evaluate(conversation) for binding in bindings if binding.admits(conversation)
    )
