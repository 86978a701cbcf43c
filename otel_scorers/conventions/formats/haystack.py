"""What Haystack's `Agent` leaves in its spans: its messages as Python reprs or as dicts.

OpenInference writes a Haystack component's inputs and outputs as JSON whose values are the
`repr` of Haystack's objects, so a conversation is a list of strings such as
`ChatMessage(_role=<ChatRole.TOOL: 'tool'>, _content=[ToolCallResult(result='Sunny',
origin=ToolCall(tool_name='get_weather', arguments={'city': 'Paris'}, id='call_1', extra=None),
error=False)], _name=None, _meta={})`. The agent runs its tools itself, without tool spans: its
tool calls and their results exist only as these messages. They are read here into GenAI
messages (text, `tool_call` and `tool_call_response` parts, the last with `error` when the tool
failed), without running any code: the repr is parsed, never evaluated. Haystack's own tracing
(and the integrations built on it) writes the same messages as `ChatMessage.to_dict()`, whose
content blocks are `{"text": ...}`, `{"tool_call": {...}}` and `{"tool_call_result": {...}}`
(`serialized_part`, read wherever a message's content blocks are).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from typing import Any

from otel_scorers.conventions.base import Message, Messages
from otel_scorers.conventions.formats.json_values import MAX_LITERAL_CHARS, decode_json
from otel_scorers.conventions.formats.messages import as_str, text_of, tool_call_parts, tool_response_parts

#: `<ChatRole.USER: 'user'>` is not Python syntax: it is replaced by its value before parsing.
_ROLE = re.compile(r"<ChatRole\.[A-Z_]+: '([a-z_]+)'>")
_CLASS = "__class__"
#: Python's text of a function (`<function ComponentTool.__init__.<locals>.invoke at 0x7f...>`, a
#: tool's among a model's input) is not data: read as None, the rest of the repr still read.
#: The start of a repr whose messages are read (`repr_messages`): its first entry, up to its `[`.
_LISTS = ("{'messages': [", "{'replies': [")
#: What decides where a repr's list ends: brackets, quotes and escapes.
_LIST_SYNTAX = re.compile(r"[\[\]'\"\\]")
_OPAQUE = re.compile(
    r"<(?:function|bound method|built-in function|built-in method) [^<>]*?(?:<locals>[^<>]*?)* at 0x[0-9a-fA-F]+>"
)


#: The start of a `ChatMessage` repr: what marks a value as Haystack's whichever scope wrote it.
REPR_MARK = "ChatMessage(_role=<ChatRole."


def holds_chat_messages(value: Any) -> bool:
    """The value (a component's recorded input or output) holds Haystack's `ChatMessage` reprs."""
    return isinstance(value, str) and REPR_MARK in value


def messages(value: Any) -> Messages:
    """A list of `ChatMessage` reprs (an `input.value`'s `messages`, an output's `replies`) as
    GenAI messages; not captured when any of them cannot be read."""
    if not isinstance(value, list) or not value:
        return Messages()
    return _every_item(value, chat_message)


def component_messages(value: Any, key: str) -> Messages:
    """The messages under `key` of a component's JSON input or output (`messages`, `replies`)."""
    decoded = decode_json(value)
    return messages(decoded.get(key)) if isinstance(decoded, Mapping) else Messages()


def last_message(value: Any) -> Message | None:
    """The `last_message` of an agent's JSON output: its answer."""
    decoded = decode_json(value)
    return chat_message(decoded.get("last_message")) if isinstance(decoded, Mapping) else None


def component_name(run_input: Any, run_output: Any, pipeline_input: Any, pipeline_output: Any) -> str | None:
    """The name a pipeline ran a component under, the one its user added it with. The pipeline's
    input (`{"data": {name: inputs}}`) names the components the user's inputs went to, its output
    (`{name: outputs}`) those whose outputs it returned: the component is the one whose inputs
    are among the run's own, or whose outputs the run returned; None unless exactly one is."""
    own_input, own_output = decode_json(run_input), decode_json(run_output)
    data = decode_json(pipeline_input)
    data = data.get("data") if isinstance(data, Mapping) else None
    outputs = decode_json(pipeline_output)
    found = {name for name, values in _entries(data) if _among(values, own_input)}
    found |= {name for name, values in _entries(outputs) if _among(values, own_output)}
    return next(iter(found)) if len(found) == 1 else None


def input_component(pipeline_input: Any) -> str | None:
    """The component a pipeline's input (`{name: inputs}`, as `Pipeline.run` is given it) went
    to, when it went to one only: the component that was asked the request; None otherwise."""
    entries = _entries(decode_json(pipeline_input))
    return entries[0][0] if len(entries) == 1 else None


def tool_agent_name(run_output: Any, caller_output: Any) -> str | None:
    """The name of the tool an agent ran as (`AgentTool`), the one its user gave it: the tool
    whose result, in the calling agent's conversation, is this agent's answer; None unless
    exactly one tool's is."""
    answer = last_message(run_output)
    text = text_of(answer) if answer is not None else None
    conversation = component_messages(caller_output, "messages").items
    if not text or not conversation:
        return None
    names = {part.get("id"): part.get("name") for part in tool_call_parts(conversation)}
    found = {
        names.get(part.get("id"))
        for part in tool_response_parts(conversation)
        if part.get("response") == text and names.get(part.get("id"))
    }
    return str(next(iter(found))) if len(found) == 1 else None


def _entries(value: Any) -> list[tuple[str, Mapping[str, Any]]]:
    if not isinstance(value, Mapping):
        return []
    return [(name, values) for name, values in value.items() if isinstance(values, Mapping) and values]


def _among(values: Mapping[str, Any], own: Any) -> bool:
    return isinstance(own, Mapping) and all(key in own and own[key] == value for key, value in values.items())


def repr_messages(value: Any) -> Messages:
    """The messages of a value Haystack's tracer wrote as its Python repr: it falls back to the
    `str()` of a value it cannot serialise, as a model step's input whose tools include an
    `AgentTool` (`{'messages': [ChatMessage(...), ...], 'tools': [AgentTool(..., function=<function
    ...>)]}`); its first entry's list, `messages` (or a reply's `replies`), is read as
    `ChatMessage` reprs are, the rest (the tools) left unparsed. Not captured when it is not
    certainly such a value."""
    if not isinstance(value, str) or len(value) > MAX_LITERAL_CHARS or "ChatMessage(" not in value:
        return Messages()
    opening = next((len(prefix) - 1 for prefix in _LISTS if value.startswith(prefix)), None)
    closing = _list_end(value, opening) if opening is not None else None
    if opening is None or closing is None:
        return Messages()
    items = _object(_OPAQUE.sub("None", _ROLE.sub(r"'\1'", value[opening:closing])))
    if not isinstance(items, list) or not items:
        return Messages()
    return _every_item(items, _message)


def _every_item(items: list[Any], read: Callable[[Any], Message | None]) -> Messages:
    """Every item read as a message, or none captured: a list read in part would misplace turns."""
    found = []
    for item in items:
        message = read(item)
        if message is None:
            return Messages()
        found.append(message)
    return Messages(tuple(found), captured=True)


def _list_end(text: str, opening: int) -> int | None:
    """Where the list whose `[` is at `opening` ends (past its `]`), brackets inside quoted
    strings not counted; None when it does not end."""
    depth = 0
    quote = ""
    escaped_at = -1
    for match in _LIST_SYNTAX.finditer(text, opening):
        char, at = match.group(), match.start()
        if at == escaped_at:
            continue
        if quote:
            if char == "\\":
                escaped_at = at + 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return at + 1
    return None


def chat_message(text: Any) -> Message | None:
    """One `ChatMessage(...)` repr as a GenAI message, None when it is not one."""
    if not isinstance(text, str) or not text.startswith("ChatMessage(") or len(text) > MAX_LITERAL_CHARS:
        return None
    return _message(_object(_ROLE.sub(r"'\1'", text)))


def _message(fields: Any) -> Message | None:
    """A parsed `ChatMessage(...)` repr (`_object`) as a GenAI message, None when it is not one."""
    if not isinstance(fields, Mapping) or fields.get(_CLASS) != "ChatMessage":
        return None
    content = fields.get("_content")
    parts = [part for item in content for part in _parts(item)] if isinstance(content, list) else []
    message: dict[str, Any] = {"role": as_str(fields.get("_role")) or "", "parts": parts}
    if isinstance(fields.get("_name"), str):
        message["name"] = fields["_name"]
    return message


def _parts(item: Any) -> list[dict[str, Any]]:
    if not isinstance(item, Mapping):
        return []
    kind = item.get(_CLASS)
    if kind == "TextContent" and isinstance(item.get("text"), str):
        return [{"type": "text", "content": item["text"]}]
    if kind == "ToolCall":
        return [_tool_call(item)]
    if kind == "ToolCallResult":
        return [_tool_result(item)]
    return []  # reasoning, images, files: not what a run is scored on


#: What Haystack's `ToolInvoker` sends the model for a tool that raised (and records as the
#: tool's `{"error": ...}`): `Failed to invoke Tool `get_weather` with parameters {...}. Error: ...`.
TOOL_ERROR_PREFIX = "Failed to invoke Tool `"


def tool_error(response: Any) -> str | None:
    """The failure of a call whose result Haystack sent the model as its failure text; None otherwise."""
    return response if isinstance(response, str) and response.startswith(TOOL_ERROR_PREFIX) else None


def serialized_part(block: Mapping[str, Any]) -> dict[str, Any] | None:
    """A tool call or result among the content of a `ChatMessage.to_dict()` (what Haystack's own
    tracing and its integrations write: `{"tool_call": {...}}`, `{"tool_call_result": {...}}`)
    as a GenAI part; None for any other block."""
    if len(block) != 1:
        return None
    call = block.get("tool_call")
    if isinstance(call, Mapping) and "tool_name" in call:
        return _tool_call(call)
    result = block.get("tool_call_result")
    if isinstance(result, Mapping) and "origin" in result:
        return _tool_result(result)
    return None


def _tool_call(item: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "tool_call",
        "id": item.get("id"),
        "name": item.get("tool_name"),
        "arguments": item.get("arguments"),
    }


def _tool_result(item: Mapping[str, Any]) -> dict[str, Any]:
    origin = item.get("origin")
    call_id = origin.get("id") if isinstance(origin, Mapping) else None
    part = {"type": "tool_call_response", "id": call_id, "response": item.get("result")}
    if item.get("error") is True:
        part["error"] = True
    return part


def _object(text: str) -> Any:
    """The repr as data: calls become dicts of their keyword arguments (with `__class__`),
    literals stay literals; anything else (names, attributes, operators) is not read."""
    try:
        tree = ast.parse(text, mode="eval")
        return _node(tree.body)
    except (Exception, MemoryError, RecursionError):  # bad input is not a message, never an error
        return None


def _node(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and (
        node.value is None or isinstance(node.value, (str, bool, int, float))
    ):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_node(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        keys = [_node(key) if key is not None else None for key in node.keys]
        if not all(isinstance(key, str) for key in keys):
            raise ValueError("a dict key that is not a string")
        return {key: _node(value) for key, value in zip(keys, node.values, strict=True)}
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float))
    ):
        return -node.operand.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
        fields: dict[str, Any] = {_CLASS: node.func.id}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise ValueError("** in a repr")
            try:
                fields[keyword.arg] = _node(keyword.value)
            except ValueError:
                fields[keyword.arg] = None  # a field that is not data (`_meta` of a custom object)
        return fields
    raise ValueError(f"not data: {type(node).__name__}")
