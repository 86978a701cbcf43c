"""Conversation bindings and the pure function that scores one ended conversation with them.

A binding samples by conversation (`ConversationSampler`: all of a conversation's turns or none,
the same in every process), labels by its threshold, and turns whatever its scorer raises or
fails to return in time into an error `Score`, never an exception.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field, replace

from otel_scorers.binding import DEFAULT_TIMEOUT_S, error_score, judge_client_loaded, within_timeout
from otel_scorers.conversation_turns import Conversation
from otel_scorers.conversations.stage import ConversationSampler
from otel_scorers.errors import ConfigError
from otel_scorers.model import Score, higher_is_worse, passes
from otel_scorers.pipeline import gathered
from otel_scorers.sampling import DEFAULT_RATE
from otel_scorers.scorers.conversation.protocol import ConversationScorer


@dataclass(frozen=True, slots=True)
class ConversationBinding:
    scorer: ConversationScorer
    name: str
    sampler: ConversationSampler = field(default_factory=ConversationSampler)
    #: Pass means at least it, or at most it where the scorer's value is worse the higher it is
    #: (`model.DeclaresDirection`).
    threshold: float | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S

    def admits(self, conversation: Conversation) -> bool:
        return self.sampler.sampled(conversation.id)

    def evaluate(self, conversation: Conversation) -> Score | Awaitable[Score]:
        start_ns, started = time.time_ns(), time.perf_counter()
        try:
            result = self.scorer.score(conversation)
        except Exception as exc:
            return self._error(exc, started, start_ns)
        if isinstance(result, Score):
            return self._finish(result, started, start_ns)
        return self._wait(result, started, start_ns)

    async def _wait(self, pending: Awaitable[Score], started: float, start_ns: int) -> Score:
        if self.scorer.uses_judge:
            not_loaded = await judge_client_loaded(self.name, pending, start_ns)
            if not_loaded is not None:
                return not_loaded
            started = time.perf_counter()  # the deadline starts once the judge's client is there
        result, failed = await within_timeout(pending, self.timeout_s, self.name, started, start_ns)
        if failed is not None or result is None:
            return failed or self._error(TypeError("the scorer's awaitable gave no Score"), started, start_ns)
        return self._finish(result, started, start_ns)

    def _error(self, exc: BaseException, started: float, start_ns: int) -> Score:
        return error_score(self.name, exc, time.perf_counter() - started, start_ns)

    def label(self, value: float) -> str | None:
        """`pass` or `fail` against the threshold, in the scorer's direction; None without one."""
        if self.threshold is None:
            return None
        return "pass" if passes(value, self.threshold, higher_is_worse(self.scorer)) else "fail"

    def _finish(self, result: Score, started: float, start_ns: int) -> Score:
        label = result.label
        if label is None and result.value is not None:
            label = self.label(result.value)
        return replace(
            result,
            scorer=self.name,
            label=label,
            duration_s=result.duration_s or time.perf_counter() - started,
            start_ns=result.start_ns or start_ns,
        )


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
    return ConversationBinding(scorer, name or scorer.name, sampler, threshold, timeout_s)


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
