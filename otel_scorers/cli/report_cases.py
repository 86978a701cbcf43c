"""The failing runs and conversations a report shows: what each was (input, answer, tool calls)
and why each of its failing scores failed.

`score --html` keeps them as the scores come, within bounds whatever the traces hold: at most
`MAX_CASES` runs and as many conversations (the first ones; the rest only counted), each text cut
to `MAX_TEXT_CHARS` characters and each run to `MAX_TOOL_CALLS` tool calls, saying what was cut.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from otel_scorers.conventions.formats.bounded_json import within_depth
from otel_scorers.conversation_turns import Conversation
from otel_scorers.human_text import cut
from otel_scorers.model import AgentRun, Score

#: Failing runs (and conversations) shown; the rest are counted.
MAX_CASES = 100
#: Characters kept of an input, answer, tool argument or result, or reason.
MAX_TEXT_CHARS = 4_000
#: Tool calls shown per run.
MAX_TOOL_CALLS = 20


@dataclass(frozen=True, slots=True)
class FailedScore:
    """One score that failed: a `fail` label, or an error of the scorer."""

    scorer: str
    verdict: str  # `fail`, or `error TYPE`
    reason: str


@dataclass(frozen=True, slots=True)
class ShownCall:
    name: str
    arguments: str
    result: str
    state: str


@dataclass(frozen=True, slots=True)
class Case:
    """A run (or a conversation, by its last run) with the scores it failed."""

    trace_id: str
    span_id: str
    agent_name: str | None
    input: str | None
    output: str | None
    tool_calls: tuple[ShownCall, ...]
    more_tool_calls: int
    failed: tuple[FailedScore, ...]
    conversation_id: str | None = None
    turns: int = 0


def failed_scores(scores: Iterable[Score]) -> tuple[FailedScore, ...]:
    """The scores that are a failure: labelled `fail`, or the scorer's error."""
    found = []
    for score in scores:
        if score.error is not None:
            text = f"{score.error.type}: {score.error.message}"
            found.append(FailedScore(score.scorer, "error", cut(text, MAX_TEXT_CHARS)))
        elif score.skipped is None and score.label == "fail":
            found.append(FailedScore(score.scorer, "fail", cut(score.reason or "", MAX_TEXT_CHARS)))
    return tuple(found)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        value = orjson.dumps(within_depth(value), default=repr).decode()
    return cut(value, MAX_TEXT_CHARS)


def _optional(text: str | None) -> str | None:
    return cut(text, MAX_TEXT_CHARS) if text is not None else None


@dataclass
class ReportCases:
    """The failing runs and conversations kept for a report, and how many there were."""

    runs: list[Case] = field(default_factory=list)
    conversations: list[Case] = field(default_factory=list)
    failing_runs: int = 0
    failing_conversations: int = 0

    def add_run(self, run: AgentRun, scores: Sequence[Score]) -> None:
        failed = failed_scores(scores)
        if not failed:
            return
        self.failing_runs += 1
        if len(self.runs) >= MAX_CASES:
            return
        calls = tuple(
            ShownCall(call.name, _text(call.arguments), _text(call.result) or _text(call.error), call.state)
            for call in run.tool_calls[:MAX_TOOL_CALLS]
        )
        self.runs.append(
            Case(
                run.trace_id_hex,
                run.span_id_hex,
                _optional(run.agent_name),
                _optional(run.input),
                _optional(run.output),
                calls,
                max(0, len(run.tool_calls) - MAX_TOOL_CALLS),
                failed,
            )
        )

    def add_conversation(self, conversation: Conversation, scores: Sequence[Score]) -> None:
        failed = failed_scores(scores)
        if not failed:
            return
        self.failing_conversations += 1
        if len(self.conversations) >= MAX_CASES:
            return
        first, last = conversation.turns[0], conversation.last
        self.conversations.append(
            Case(
                f"{last.trace_id:032x}",
                f"{last.span_id:016x}",
                _optional(conversation.agent_name),
                _optional(first.input),
                _optional(last.output),
                (),
                0,
                failed,
                cut(conversation.id, MAX_TEXT_CHARS),
                conversation.turn_count,
            )
        )


class ScoreWatcher(Protocol):
    """What sees each run's scores, and each conversation's, as `score` makes them."""

    def add_run(self, run: AgentRun, scores: Sequence[Score]) -> None: ...

    def add_conversation(self, conversation: Conversation, scores: Sequence[Score]) -> None: ...
