"""Qwen-Agent's own texts, as its instrumentations record them.

An agent's tool that raised is not a failed call to Qwen-Agent: its tool wrapper catches the
exception and returns, for the model, a text of its own:

    An error occurred when calling tool `{tool}`:\\n{ExceptionType}: {message}\\nTraceback:\\n...

which is the tool span's result too (LoongSuite's and OpenTelemetry's instrumentations), and the
result sent back to the model.
"""

from __future__ import annotations

from typing import Any

TOOL_ERROR_PREFIX = "An error occurred when calling tool `"
_ERROR_START = "`:\n"
_TRACEBACK = "\nTraceback:"


def tool_error(response: Any) -> str | None:
    """The error (`{ExceptionType}: {message}`) of a call whose result is Qwen-Agent's failure
    text; None otherwise."""
    if not isinstance(response, str) or not response.startswith(TOOL_ERROR_PREFIX):
        return None
    start = response.find(_ERROR_START, len(TOOL_ERROR_PREFIX))
    if start < 0:
        return None
    error = response[start + len(_ERROR_START) :]
    return error.split(_TRACEBACK, 1)[0].strip() or response
