"""What an OpenLLMetry span says in text: an entity's input and output, a tool call's arguments,
and the indexed `gen_ai.prompt.N.*` attributes read as messages."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions.base import (
    Message,
    Messages,
)
from otel_scorers.conventions.formats import langchain
from otel_scorers.conventions.formats.genai_events import listed_messages
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import last_assistant_text, last_user_text

_INDEXED_KEY = re.compile(r"(\d+)\.(.+)")


def entity_input_text(value: Any) -> str | None:
    """The user's request in a workflow's input: a graph's messages, or a lone string argument."""
    decoded = decode_json(value)
    if isinstance(decoded, str):
        return decoded
    messages = langchain.messages_of(decoded)
    if messages:
        return last_user_text(messages)
    if isinstance(decoded, Mapping):
        args, kwargs = decoded.get("args"), decoded.get("kwargs")
        strings = [arg for arg in (args or ()) if isinstance(arg, str)]
        if isinstance(kwargs, Mapping):
            strings += [arg for arg in kwargs.values() if isinstance(arg, str)]
        if len(strings) == 1:
            return strings[0]
    return None


def entity_output_text(value: Any) -> str | None:
    decoded = decode_json(value)
    if isinstance(decoded, str):
        return decoded
    messages = langchain.messages_of(decoded)
    if messages:
        return last_assistant_text(messages) or ""
    return None


def tool_call_arguments(value: Any) -> tuple[Any, str | None]:
    """(arguments, call id) from what OpenLLMetry recorded as a tool's input.

    LangChain tools: `{"input_str": repr(args), "inputs": args, "kwargs": {"tool_call_id"}, ...}`.
    Decorated tools: `{"args": [...], "kwargs": {...}}`.
    """
    if not isinstance(value, Mapping):
        return value, None
    started = langchain.tool_start(value)
    if started is not None:
        return started
    if (
        set(value) <= {"args", "kwargs"}
        and isinstance(value.get("kwargs"), Mapping)
        and not value.get("args")
    ):
        return dict(value["kwargs"]), None
    return value, None


def unwrapped_output(value: Any) -> Any:
    if isinstance(value, Mapping) and set(value) <= {"output", "kwargs"} and "output" in value:
        return value["output"]
    return value


def indexed_messages(attributes: Mapping[str, Any], prefix: str) -> Messages:
    """Legacy `gen_ai.prompt.{i}.role|content|tool_call_id|tool_calls.{j}.id|name|arguments`."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        match = _INDEXED_KEY.fullmatch(key, len(prefix))
        if match is not None:
            found.setdefault(int(match.group(1)), {})[match.group(2)] = value
    if not found:
        return Messages()
    if len(found) == 1:
        whole = _conversation_in_content(next(iter(found.values())).get("content"))
        if whole is not None:
            return whole
    return Messages(tuple(_indexed_message(found[index]) for index in sorted(found)), captured=True)


def _conversation_in_content(content: Any) -> Messages | None:
    """The messages one indexed message's content holds when that content is itself a JSON list
    of chat messages, each with its role: the whole request written as a single prompt (AgentOps'
    OpenAI Agents spans write the SDK's input so). None for any other content."""
    if not isinstance(content, str) or content[:2] != "[{":
        return None
    decoded = decode_json(content)
    if not isinstance(decoded, list) or not all(
        isinstance(item, Mapping) and isinstance(item.get("role"), str) for item in decoded
    ):
        return None
    return listed_messages(decoded, "user")


def _indexed_message(fields: Mapping[str, Any]) -> Message:
    role = str(fields.get("role") or "")
    content = fields.get("content")
    decoded = decode_json(content) if isinstance(content, str) and content[:1] == "[" else content
    text = langchain.content_text(decoded) if isinstance(decoded, list) else content
    parts: list[dict[str, Any]] = []
    if role == "tool":
        parts.append({"type": "tool_call_response", "id": fields.get("tool_call_id"), "response": text})
    elif isinstance(text, str):
        parts.append({"type": "text", "content": text})
    calls: dict[int, dict[str, Any]] = {}
    for key, value in fields.items():
        if key.startswith("tool_calls."):
            index, _, rest = key[len("tool_calls.") :].partition(".")
            if index.isdigit():
                calls.setdefault(int(index), {})[rest] = value
    for position in sorted(calls):
        call = calls[position]
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": call.get("name"),
                "arguments": call.get("arguments"),
            }
        )
    return {"role": role, "parts": parts}
