"""Bedrock Converse content: the content blocks of a message (`[{"text": ...}]`,
`[{"json": ...}]`) and the `toolResult` a framework sends the model for a tool call
(`{"toolUseId", "status", "content": [blocks]}`: Strands' `ToolResult`, whichever instrumentation
records it as the tool's result)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_TOOL_RESULT_KEYS = frozenset({"toolUseId", "status", "content"})


def unwrap_blocks(result: Any) -> Any:
    """Content blocks as what they hold: text blocks become their text, one JSON block its value."""
    if not isinstance(result, list) or not result or not all(isinstance(block, Mapping) for block in result):
        return result
    if all(set(block) == {"text"} and isinstance(block["text"], str) for block in result):
        return "".join(block["text"] for block in result)
    if len(result) == 1 and set(result[0]) == {"json"}:
        return result[0]["json"]
    return result


def tool_result(value: Any) -> tuple[Any, str | None] | None:
    """(what the tool returned, its failure or None) of a Converse `toolResult`: its content
    blocks unwrapped, failed when its status is `error`. None for any other value."""
    # Decoded JSON: a dict, so the cheap check (no ABC) is the whole check.
    if not isinstance(value, dict) or set(value) != _TOOL_RESULT_KEYS:
        return None
    content = value["content"]
    if not isinstance(content, list) or not all(isinstance(block, Mapping) for block in content):
        return None
    returned = unwrap_blocks(content)
    if value["status"] != "error":
        return returned, None
    return returned, returned if isinstance(returned, str) and returned else "error"
