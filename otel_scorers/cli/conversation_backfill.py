"""Conversations in a backfill (`otel-scorers score`): turns grouped across every input file, and
each conversation scored once at the end of the input (or earlier, when a turn ends it: the end
predicate, `max_turns`). Time does not end a conversation here: files carry no arrival times.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from otel_scorers.cli.backfill import DEFAULT_CONCURRENCY
from otel_scorers.conversation_turns import Conversation, turn_of
from otel_scorers.conversations.scoring import score_conversation, widest
from otel_scorers.conversations.source import ConversationSettings
from otel_scorers.conversations.stage import ConversationStage
from otel_scorers.model import AgentRun, Score, score_fields

WriteScore = Callable[[Conversation, Score], None]
EmitScores = Callable[[Conversation, Sequence[Score]], None]


def conversation_score_json(conversation: Conversation, score: Score) -> dict[str, Any]:
    """One line of `otel-scorers score` output for a conversation's score."""
    last = conversation.last
    return {
        "conversation_id": conversation.id,
        "trace_id": f"{last.trace_id:032x}",
        "span_id": f"{last.span_id:016x}",
        "agent_name": conversation.agent_name,
        "turns": conversation.turn_count,
        "ended_by": conversation.ended_by,
        **score_fields(score),
    }


class ConversationBackfill:
    def __init__(self, settings: ConversationSettings) -> None:
        self.settings = settings
        self.dropped: dict[str, int] = {}
        self.stage = ConversationStage(settings.limits, widest(settings.bindings), lambda: 0.0, self._counted)

    def _counted(self, outcome: str, amount: int) -> None:
        self.dropped[outcome] = self.dropped.get(outcome, 0) + amount

    def runs(self, runs: Iterable[AgentRun]) -> Iterator[AgentRun]:
        """The runs, passed through, their turns kept on the way."""
        end_when = self.settings.end_when
        for run in runs:
            ends = False
            if end_when is not None and run.conversation_id:
                try:
                    ends = bool(end_when(run))
                except Exception:
                    ends = False
            turn = turn_of(run, ends)
            if turn is not None:
                self.stage.add(turn)
            yield run

    async def finish(
        self, write: WriteScore, emit: EmitScores | None = None, concurrency: int = DEFAULT_CONCURRENCY
    ) -> int:
        """Score every conversation (those a turn ended, then the rest, ended by the end of the
        input), at most `concurrency` at once; how many were scored."""
        conversations = [*self.stage.close_due(), *self.stage.close_all("end_of_input")]
        slots = asyncio.Semaphore(concurrency)

        async def one(conversation: Conversation) -> None:
            async with slots:
                scores = await score_conversation(self.settings.bindings, conversation)
            for score in scores:
                write(conversation, score)
            if emit is not None:
                emit(conversation, scores)

        await asyncio.gather(*(one(conversation) for conversation in conversations))
        return len(conversations)
