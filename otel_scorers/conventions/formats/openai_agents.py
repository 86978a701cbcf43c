"""The OpenAI Agents SDK's text for a tool that raised, as any instrumentation records it.

The SDK's default `failure_error_function` catches what a function tool raises and returns, as
the tool's result, `An error occurred while running the tool. Please try again.` (with
`Error: {message}` after it in some releases); the model is sent that text, and a span of the
call may record it as what the tool returned, left OK. The text says the call failed, whichever
reader claimed the span (`frameworks.py`).
"""

from __future__ import annotations

from typing import Any

#: How the SDK begins the result of a call whose tool raised.
TOOL_ERROR_PREFIX = "An error occurred while running the tool."
#: What precedes the exception's message in that text, when the release writes it.
_ERROR = " Error: "


def tool_error(response: Any) -> str | None:
    """The failure (the exception's message, else the whole text) of a call whose result the
    SDK made of what its tool raised; None otherwise."""
    if not isinstance(response, str) or not response.startswith(TOOL_ERROR_PREFIX):
        return None
    _, found, message = response.partition(_ERROR)
    return message.strip() or response if found else response
