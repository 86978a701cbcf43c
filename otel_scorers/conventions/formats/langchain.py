"""LangChain's serialised messages and ToolMessages, as instrumentations of LangChain record them.

Three message shapes reach a trace: the raw invoke input (`{"role", "content"}` or a
`["user", "text"]` pair), `message_to_dict` output (`{"type": "human", "data": {...}}`,
OpenInference) and `dumpd` output (`{"lc": 1, "type": "constructor", "id": [..., "HumanMessage"],
"kwargs": {...}}`, OpenLLMetry). All become GenAI-shaped messages, their tool calls in LangChain's
form (`{"name", "args"}`) or the chat-completions one (`{"function": {"name", "arguments"}}`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions.base import Message
from otel_scorers.conventions.formats import autogen
from otel_scorers.conventions.formats.messages import decode_json
from otel_scorers.span_record import SpanRecord

#: The span attribute that holds a LangChain run's metadata as JSON (OpenInference, MLflow).
METADATA = "metadata"
#: `ls_integration` values of an agent graph (LangGraph, `create_agent`) in LangChain's metadata.
LANGGRAPH_INTEGRATIONS = frozenset({"langgraph", "langchain_create_agent"})

_ROLES = {
    "human": "user",
    "user": "user",
    "humanmessage": "user",
    "humanmessagechunk": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "aimessage": "assistant",
    "aimessagechunk": "assistant",
    "system": "system",
    "systemmessage": "system",
    "tool": "tool",
    "toolmessage": "tool",
    "function": "tool",
}


def _fields(item: Any) -> tuple[str, Mapping[str, Any]] | None:
    """(role, fields) of one serialised message, whatever its shape."""
    if isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str):
        return _ROLES.get(item[0].lower(), item[0]), {"content": item[1]}
    if not isinstance(item, Mapping):
        return None
    if isinstance(item.get("kwargs"), Mapping) and item.get("lc") is not None:
        kwargs = item["kwargs"]
        ids = item.get("id")
        kind = str(kwargs.get("type") or (ids[-1] if isinstance(ids, list) and ids else ""))
        return _ROLES.get(kind.lower(), kind), kwargs
    if isinstance(item.get("data"), Mapping) and "type" in item:
        return _ROLES.get(str(item["type"]).lower(), str(item["type"])), item["data"]
    if "role" in item or "type" in item:
        kind = str(item.get("role") or item.get("type"))
        # AutoGen's messages, recorded by their fields, are read wherever messages are.
        return _ROLES.get(kind.lower()) or autogen.message_role(item) or kind, item
    return None


def content_text(content: Any) -> str | None:
    """A message content: a string, or text blocks joined (typed, or a bare `{"text": ...}` as a
    Haystack `ChatMessage.to_dict()` writes them)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            block if isinstance(block, str) else block.get("text")
            for block in content
            if isinstance(block, str)
            or (isinstance(block, Mapping) and (block.get("type") == "text" or block.keys() == {"text"}))
        ]
        return "".join(text for text in texts if isinstance(text, str))
    return None


def to_message(item: Any) -> Message | None:
    fields = _fields(item)
    if fields is None:
        return None
    role, data = fields
    text = content_text(data.get("content"))
    parts: list[dict[str, Any]] = []
    if role == "tool":
        parts.append({"type": "tool_call_response", "id": data.get("tool_call_id"), "response": text})
    elif text:
        parts.append({"type": "text", "content": text})
    for call in data.get("tool_calls") or ():
        if isinstance(call, Mapping):
            # LangChain's {"name", "args"}, or the chat-completions {"function": {"name", "arguments"}}
            function = call.get("function")
            if "name" not in call and isinstance(function, Mapping):
                name, arguments = function.get("name"), function.get("arguments")
            else:
                name, arguments = call.get("name"), call.get("args")
            parts.append({"type": "tool_call", "id": call.get("id"), "name": name, "arguments": arguments})
    return {"role": role, "parts": parts}


def messages_of(value: Any) -> list[Message] | None:
    """The messages of a graph's input or output state (`{"messages": [...]}`, possibly under
    `inputs`/`outputs`), or None when the value holds none."""
    value = decode_json(value)
    for key in ("inputs", "outputs"):
        if isinstance(value, Mapping) and isinstance(value.get(key), Mapping):
            value = value[key]
    if not isinstance(value, Mapping) or not isinstance(value.get("messages"), list):
        return None
    return [message for message in map(to_message, value["messages"]) if message is not None]


def tool_message(value: Any) -> Mapping[str, Any] | None:
    """The fields of a serialised ToolMessage (`content`, `tool_call_id`, `status`), if it is one."""
    value = decode_json(value)
    if isinstance(value, Mapping) and isinstance(value.get("output"), Mapping):
        value = value["output"]  # OpenLLMetry's {"output": ToolMessage, "kwargs": ...}
    fields = _fields(value) if isinstance(value, Mapping) else None
    if fields is None or fields[0] != "tool" or "tool_call_id" not in fields[1]:
        return None
    return fields[1]


def span_metadata(span: SpanRecord) -> Mapping[str, Any]:
    """The LangChain metadata the span holds (`metadata`, JSON), empty when it holds none."""
    metadata = decode_json(span.attributes.get(METADATA))
    return metadata if isinstance(metadata, Mapping) else {}


def is_agent_graph(metadata: Mapping[str, Any], span_name: str) -> bool:
    """LangChain's metadata marks the span as an agent graph's own, not one of its nodes': its
    `lc_agent_name` is the span's name, or it is a graph (`ls_integration`) that is no node
    (`langgraph_node`) of another graph."""
    if metadata.get("lc_agent_name") == span_name:
        return True
    return metadata.get("ls_integration") in LANGGRAPH_INTEGRATIONS and "langgraph_node" not in metadata


def marks_agent_graph(span: SpanRecord) -> bool:
    """The span is an agent graph by its LangChain metadata, whichever instrumentation recorded it
    without marking it an agent (MLflow's CHAIN spans). Cheap for every other span: one lookup and
    a substring test before any decoding."""
    raw = span.attributes.get(METADATA)
    if raw is None:
        return False
    if isinstance(raw, str) and (
        ("ls_integration" not in raw and "lc_agent_name" not in raw)
        # A graph's node, unless the agent's name is the node's: not a graph of its own.
        or ("langgraph_node" in raw and not _names_agent(raw, span.name))
    ):
        return False
    return is_agent_graph(span_metadata(span), span.name)


def _names_agent(raw: str, name: str) -> bool:
    """The metadata's JSON text may give `name` as its `lc_agent_name` (written by Python's
    `json.dumps`, with or without the space after the colon; a name it may escape is decoded)."""
    if not name.isascii() or '"' in name or "\\" in name:
        return True
    return f'"lc_agent_name": "{name}"' in raw or f'"lc_agent_name":"{name}"' in raw
