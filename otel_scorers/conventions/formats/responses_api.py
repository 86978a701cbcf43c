"""The OpenAI Responses API's items, where a list of chat messages holds them.

An instrumentation of the OpenAI Agents SDK's Responses API model (Laminar's) writes the model's
input and output as the API's items beside chat messages: a call the model asked for
(`{"type": "function_call", "call_id", "name", "arguments"}`), what it was sent back for one
(`{"type": "function_call_output", "call_id", "output"}`), and messages whose content is blocks
of text (`input_text`, `output_text`). Read as the GenAI parts they stand for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The OpenAI Responses API's items of a call: the model's request, and what it was sent back.
CALL_ITEMS = frozenset({"function_call", "function_call_output"})
#: Its blocks of text, in a message's content: the input's and the output's.
TEXT_BLOCKS = frozenset({"input_text", "output_text"})


def is_call_item(item: Mapping[str, Any]) -> bool:
    """The item is a call's (`CALL_ITEMS`)."""
    kind = item.get("type")
    return type(kind) is str and kind in CALL_ITEMS


def is_text_block(block: Any) -> bool:
    """The block is one of the Responses API's blocks of text (`TEXT_BLOCKS`)."""
    kind = block.get("type") if type(block) is dict else None
    return type(kind) is str and kind in TEXT_BLOCKS


def call_parts(item: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """A Responses API call item as a message's parts and role."""
    if item.get("type") == "function_call":
        call: dict[str, Any] = {"type": "tool_call", "id": item.get("call_id"), "name": item.get("name")}
        return [{**call, "arguments": item.get("arguments")}], "assistant"
    return [{"type": "tool_call_response", "id": item.get("call_id"), "response": item.get("output")}], "tool"


def text_blocks(content: Any) -> Any:
    """A content list with the Responses API's blocks of text as text parts."""
    if type(content) is not list or not any(is_text_block(block) for block in content):
        return content
    return [
        {"type": "text", "content": block.get("text")} if is_text_block(block) else block for block in content
    ]
