"""Qwen-Agent's text for a tool that raised, as any instrumentation records it.

Qwen-Agent's `Agent._call_tool` catches what a tool raises and returns, as the tool's result,
`An error occurred when calling tool `{name}`:\\n{ExceptionType}: {message}\\nTraceback:\\n...`;
the model is sent that text, and a span of the call records it as what the tool returned, left
OK. The text says the call failed, whichever reader claimed the span (`frameworks.py`).
"""

from __future__ import annotations

from typing import Any

#: How Qwen-Agent begins the result of a call whose tool raised.
TOOL_ERROR_PREFIX = "An error occurred when calling tool `"
#: What follows the exception in that text.
_TRACEBACK = "\nTraceback:"


def tool_error(response: Any) -> str | None:
    """The failure (`{ExceptionType}: {message}`) of a call whose result Qwen-Agent made of what
    its tool raised; None otherwise."""
    if not isinstance(response, str) or not response.startswith(TOOL_ERROR_PREFIX):
        return None
    _, _, failure = response.partition("\n")
    failure = failure.split(_TRACEBACK, 1)[0].strip()
    return failure or response
