"""A run's request or answer, or a tool call's arguments or result, that is the placeholder an
instrumentation writes in place of content it does not capture (`[redacted]` in each message
part: the messages keep their shape, so they read as captured) is not the run's: the trace does
not hold it, and the run lists it as missing."""

from __future__ import annotations

from dataclasses import replace

from otel_scorers.conventions.formats.messages import PLACEHOLDERS, is_placeholder
from otel_scorers.model import ToolCall

#: No placeholder is longer: a longer text that neither starts nor ends with whitespace is none.
_LONGEST = max(len(placeholder) for placeholder in PLACEHOLDERS)


def captured_text(text: str | None) -> str | None:
    """`text`, None when it is a placeholder (a captured text, long and unpadded, decided in line:
    asked twice of every run)."""
    if text is None or (len(text) > _LONGEST and not (text[0].isspace() or text[-1].isspace())):
        return text
    return None if is_placeholder(text) else text


def captured_calls(calls: list[ToolCall]) -> list[ToolCall]:
    """The calls, each without the arguments or result that is a placeholder (the list itself
    when none is: a loop, not `any` over a generator, as it is asked of every run)."""
    for call in calls:
        arguments, result = call.arguments, call.result
        if (type(arguments) is str or isinstance(arguments, str)) and is_placeholder(arguments):
            break
        if (type(result) is str or isinstance(result, str)) and is_placeholder(result):
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
