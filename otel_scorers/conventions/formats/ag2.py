"""AG2's own objects (`autogen`'s ConversableAgent, AG2 0.x) as any instrumentation records them.

An agent runs a tool the model asked for through `ConversableAgent.execute_function(func_call)`,
which is given the model's request as `{"name": tool, "arguments": "<JSON>"}` and returns
`(success, {"name", "role", "content"})`: a tracer of that method (OpenInference's AG2
instrumentation, or any that records a function's arguments and return value) records them so.
They are read as the arguments the model gave and the content the tool returned, failed when
`success` is false, whichever reader claimed the span (`runs/tool_matching`). The content of a
call that raised is `Error: {exception}`, which the model is sent as the call's response.
"""

from __future__ import annotations

from typing import Any

from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import is_mapping

_REQUEST_KEYS = frozenset({"name", "arguments"})


def tool_arguments(decoded: Any, tool: str | None) -> Any:
    """`{name, arguments: "<JSON>"}` naming the tool `tool` -> the arguments the model gave; any
    other value as it is (a tool whose own parameters are `name` and `arguments` is not asked
    for by its own name in them)."""
    if (
        is_mapping(decoded)
        and decoded.keys() == _REQUEST_KEYS
        and decoded.get("name") == tool
        and isinstance(decoded.get("arguments"), str)
    ):
        return decode_json(decoded["arguments"])
    return decoded


def tool_result(decoded: Any) -> tuple[Any, bool | None]:
    """AG2's `[success, {name, role, content}]` -> (the content, success); anything else as is."""
    if (
        isinstance(decoded, list)
        and len(decoded) == 2
        and isinstance(decoded[0], bool)
        and is_mapping(decoded[1])
        and "content" in decoded[1]
    ):
        return decode_json(decoded[1]["content"]), decoded[0]
    return decoded, None


#: What `execute_function` makes the content of a call whose function raised: `Error: {exception}`.
TOOL_ERROR_PREFIX = "Error: "


def tool_error(response: Any) -> str | None:
    """The failure of a call whose response AG2 sent the model as its failure text; None otherwise.
    LangGraph's ToolNode sends a failure so too (`Error: {exception}\n Please fix your mistakes.`):
    a response so begun says the call failed, whichever framework sent it."""
    if isinstance(response, str) and response.startswith(TOOL_ERROR_PREFIX):
        return response[len(TOOL_ERROR_PREFIX) :] or response
    return None
