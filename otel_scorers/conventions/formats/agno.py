"""Agno's `ToolResult` as text: what OpenLLMetry's Agno instrumentation records as a tool's output.

The instrumentation writes `str(result)` of the `ToolResult` Agno's tool wrapper returns, fields
as `name=repr(value)` pairs: `status='success' result={'temp_c': 21} error=None
updated_session_state=None images=None ...`. A tool that raised is caught by Agno, so its span
ends OK and only `status='failure'` with the `error` text tells that it failed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from otel_scorers.conventions.formats.json_values import python_literal

_HEAD = re.compile(r"status='(\w+)' result=")
_ERROR = " error="
#: The fields after `error` (session state, media) say nothing about the call's outcome.
_AFTER_ERROR = " updated_session_state="
_UNREAD = object()
_MAX_SPLITS_EACH_END = 4
_OBJECT_REPR = re.compile(r"<[^\n]* at 0x[0-9a-fA-F]+>")


@dataclass(frozen=True, slots=True)
class ToolResult:
    status: str
    #: The tool's return value as data when its repr is a literal, else the repr's text; None
    #: for a default object repr, which holds no value.
    result: Any
    error: str | None

    @property
    def failed(self) -> bool:
        return self.status != "success"


def tool_result(text: Any) -> ToolResult | None:
    """The `ToolResult` written in `text`; None when `text` is not one."""
    if not isinstance(text, str):
        return None
    head = _HEAD.match(text)
    if head is None:
        return None
    body = text[head.end() :]
    tail = body.rfind(_AFTER_ERROR)
    if tail >= 0:
        body = body[:tail]
    # The result's repr may itself contain " error=": the split is where both sides read. Each
    # try parses up to the whole text, so only the first and last few places are tried.
    splits = [match.start() for match in re.finditer(re.escape(_ERROR), body)]
    if len(splits) > 2 * _MAX_SPLITS_EACH_END:
        splits = splits[:_MAX_SPLITS_EACH_END] + splits[-_MAX_SPLITS_EACH_END:]
    for at in splits:
        error = python_literal(body[at + len(_ERROR) :], _UNREAD)
        result = python_literal(body[:at], _UNREAD)
        if (error is None or isinstance(error, str)) and result is not _UNREAD:
            return ToolResult(head.group(1), result, error)
    for at in reversed(splits):  # a result that is no literal (an object's repr) stays text
        error = python_literal(body[at + len(_ERROR) :], _UNREAD)
        if error is None or isinstance(error, str):
            text_result = body[:at]
            # `<generator object ... at 0x...>` (a team's delegation to a member) tells nothing
            # of what the tool gave the model: no result, so the one sent back to it is used.
            return ToolResult(
                head.group(1), None if _OBJECT_REPR.fullmatch(text_result) else text_result, error
            )
    return None
