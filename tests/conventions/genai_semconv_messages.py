"""How each form of the GenAI semantic conventions keeps a model call's messages, written from
chat-completions messages (`{role, content, tool_calls}`, `{role: tool, tool_call_id, content}`)."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

INSTRUCTIONS = "You are a weather assistant."
Message = dict[str, Any]


class Content(Enum):
    """Where a model call's messages are kept."""

    ATTRIBUTES = "attributes"
    DETAILS_EVENT = "details event"
    MESSAGE_EVENTS = "message events"
    PROMPT_EVENTS = "prompt events"
    INDEXED = "indexed attributes"
    NONE = "nowhere"


def genai_parts(message: Message, as_text: bool = False) -> Message:
    """A chat-completions message in the GenAI messages schema (1.37+)."""
    if message["role"] == "tool":
        part = {"type": "tool_call_response", "id": message["tool_call_id"], "response": message["content"]}
        return {"role": "tool", "parts": [part]}
    parts: list[dict[str, Any]] = []
    if message.get("content"):
        parts.append({"type": "text", "content": message["content"]})
    for request in message.get("tool_calls") or ():
        function = request["function"]
        arguments = function["arguments"] if as_text else json.loads(function["arguments"])
        parts.append(
            {"type": "tool_call", "id": request["id"], "name": function["name"], "arguments": arguments}
        )
    return {"role": message["role"], "parts": parts}


def genai_content(messages: list[Message], outputs: list[Message], as_text: bool = False) -> dict[str, str]:
    """The GenAI content attributes: instructions, input and output messages."""
    finished = []
    for output in outputs:
        parts = genai_parts(output, as_text)
        if output["role"] == "assistant":
            parts["finish_reason"] = "tool_call" if output.get("tool_calls") else "stop"
        finished.append(parts)
    return {
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": INSTRUCTIONS}]),
        "gen_ai.input.messages": json.dumps([genai_parts(message, as_text) for message in messages]),
        "gen_ai.output.messages": json.dumps(finished),
    }


def model_events(
    content: Content, messages: list[Message], output: Message
) -> list[tuple[str, dict[str, Any]]]:
    """The span events that hold a model call's messages in `content`'s form (none for attributes)."""
    chat = [{"role": "system", "content": INSTRUCTIONS}, *messages]
    if content is Content.DETAILS_EVENT:
        return [("gen_ai.client.inference.operation.details", genai_content(messages, [output]))]
    if content is Content.PROMPT_EVENTS:
        completion = {key: value for key, value in output.items() if value is not None}
        return [
            ("gen_ai.content.prompt", {"gen_ai.prompt": json.dumps(chat)}),
            ("gen_ai.content.completion", {"gen_ai.completion": json.dumps([completion])}),
        ]
    if content is not Content.MESSAGE_EVENTS:
        return []
    events: list[tuple[str, dict[str, Any]]] = []
    for message in chat:
        body: dict[str, Any] = {"gen_ai.system": "openai"}
        if message.get("content") is not None:
            body["content"] = message["content"]
        if message.get("tool_calls"):
            body["tool_calls"] = json.dumps(message["tool_calls"])
        if message["role"] == "tool":
            body["id"] = message["tool_call_id"]
        events.append((f"gen_ai.{message['role']}.message", body))
    choice = {key: value for key, value in output.items() if key != "role" and value is not None}
    finish = "tool_calls" if output.get("tool_calls") else "stop"
    events.append(
        (
            "gen_ai.choice",
            {"gen_ai.system": "openai", "index": 0, "finish_reason": finish, "message": json.dumps(choice)},
        )
    )
    return events


def indexed_content(messages: list[Message], output: Message) -> dict[str, Any]:
    """`gen_ai.prompt.{i}.*` and `gen_ai.completion.0.*`, tool calls indexed under them."""
    attributes: dict[str, Any] = {}
    chat = [{"role": "system", "content": INSTRUCTIONS}, *messages]
    for prefix, listed in (("gen_ai.prompt", chat), ("gen_ai.completion", [output])):
        for index, message in enumerate(listed):
            key = f"{prefix}.{index}"
            attributes[f"{key}.role"] = message["role"]
            if message.get("content") is not None:
                attributes[f"{key}.content"] = message["content"]
            if message["role"] == "tool":
                attributes[f"{key}.tool_call_id"] = message["tool_call_id"]
            for number, request in enumerate(message.get("tool_calls") or ()):
                attributes[f"{key}.tool_calls.{number}.id"] = request["id"]
                attributes[f"{key}.tool_calls.{number}.name"] = request["function"]["name"]
                attributes[f"{key}.tool_calls.{number}.arguments"] = request["function"]["arguments"]
            if prefix == "gen_ai.completion":
                attributes[f"{key}.finish_reason"] = "tool_calls" if message.get("tool_calls") else "stop"
    return attributes
