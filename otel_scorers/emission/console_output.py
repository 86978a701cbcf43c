"""Scores as text, one line each, as the Collector's `debug` exporter shows telemetry: to see
what is scored on a machine without a collector, a backend or a dashboard.

    score trace=4bf92f3577b34da6a3ce929d0e0e4736 run=00f067aa0ba902b7 agent=weather-agent scorer=no_tool_errors value=0 label=fail reason="get_weather failed: timeout"

Lines are written by the thread that emits the scores (the scoring thread, never an agent's),
each run's lines in one write, so that runs scored by several processes do not interleave.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from typing import TextIO

import orjson

from otel_scorers.conversation_turns import Conversation
from otel_scorers.emission.attributes import conversation_run
from otel_scorers.fork_safety import renew_in_child
from otel_scorers.human_text import printable
from otel_scorers.model import AgentRun, Score
from otel_scorers.throttled_log import throttled

#: Longest reason, skip or error message shown on a line (the telemetry has them whole).
MAX_TEXT = 300


def _word(text: str | None) -> str:
    """A name as it is when it reads as one word, else quoted."""
    if not text:
        return "-"
    return text if text.isprintable() and not any(c in text for c in ' "=') else _quoted(text)


def _quoted(text: str) -> str:
    if len(text) > MAX_TEXT:
        text = text[: MAX_TEXT - 3] + "..."
    return orjson.dumps(text).decode()  # one line whatever the text holds


def score_line(run: AgentRun, score: Score, conversation: Conversation | None = None) -> str:
    """`score trace=... run=... agent=... scorer=... value=... label=... reason="..."`; a
    conversation's score names its last run and says `conversation=<id> turns=<n>` after the agent."""
    parts = [
        "score",
        f"trace={run.trace_id_hex}",
        f"run={run.span_id_hex}",
        f"agent={_word(run.agent_name)}",
    ]
    if conversation is not None:
        parts.append(f"conversation={_word(conversation.id)}")
        parts.append(f"turns={conversation.turn_count}")
    parts.append(f"scorer={_word(score.scorer)}")
    if score.skipped is not None:
        parts.append(f"skipped={_quoted(score.skipped)}")
    elif score.error is not None:
        parts.append(f"error={_quoted(f'{score.error.type}: {score.error.message}')}")
    else:
        parts.append(f"value={score.value:g}" if score.value is not None else "value=-")
        parts.append(f"label={score.label or '-'}")
        if score.reason:
            parts.append(f"reason={_quoted(score.reason)}")
    # JSON quoting escapes C0 controls only: C1, separators and bidi controls pass it raw
    return printable(" ".join(parts))


class ConsoleOutput:
    """One line per score on `out` (standard output by default)."""

    def __init__(self, out: TextIO | None = None) -> None:
        self._out = out
        self._lock = threading.Lock()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        self._lock = threading.Lock()

    def flush(self) -> None:
        """Nothing held: each run's lines are written as they come."""

    def behind(self) -> bool:
        return False

    def emit(self, run: AgentRun, scores: Sequence[Score]) -> None:
        self._write("".join(score_line(run, score) + "\n" for score in scores))

    def emit_conversation(self, conversation: Conversation, scores: Sequence[Score]) -> None:
        run = conversation_run(conversation)
        self._write("".join(score_line(run, score, conversation) + "\n" for score in scores))

    def _write(self, text: str) -> None:
        out = self._out or sys.stdout
        try:
            with self._lock:
                out.write(text)
                out.flush()
        except (OSError, ValueError):  # a closed or broken stdout must not stop scoring
            throttled.warning("console", "otel_scorers: could not write scores to the console", exc_info=True)
