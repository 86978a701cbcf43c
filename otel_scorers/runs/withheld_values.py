"""A run's request or answer, or a tool call's arguments or result, that is the placeholder an
instrumentation writes in place of content it does not capture (`[redacted]` in each message
part: the messages keep their shape, so they read as captured) is not the run's: the trace does
not hold it, and the run lists it as missing."""

from __future__ import annotations

from dataclasses import replace

from otel_scorers.conventions.formats.messages import is_placeholder
from otel_scorers.model import ToolCall


def captured_text(text: str | None) -> str | None:
    """`text`, None when it is a placeholder."""
    return None if text is None or is_placeholder(text) else text


def captured_calls(calls: list[ToolCall]) -> list[ToolCall]:
    """The calls, each without the arguments or result that is a placeholder (the list itself
    when none is: a loop, not `any` over a generator, as it is asked of every run)."""
    for call in calls:
        if is_placeholder(call.arguments) or is_placeholder(call.result):
            break
    else:
        return calls
    return [
        replace(
            call,
            arguments=None if is_placeholder(call.arguments) else call.arguments,
            result=None if is_placeholder(call.result) else call.result,
        )
        for call in calls
    ]
