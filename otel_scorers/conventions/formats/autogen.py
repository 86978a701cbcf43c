"""AutoGen's own objects as any instrumentation serialises them (their fields as JSON).

AutoGen keeps a conversation in objects of its own, recorded field by field by whatever records
a function's arguments and return value (MLflow's autolog, OpenInference's AgentChat
instrumentation, a tracer of any code), so they are read wherever messages are:

- autogen-core's model messages carry no role but their class in `type`: `SystemMessage`,
  `UserMessage`, `AssistantMessage` (its `content` text, or the `FunctionCall`s
  `{id, name, arguments}` the model asked for), `FunctionExecutionResultMessage` (its `content`
  the `FunctionExecutionResult`s `{call_id, content, is_error, name}` the model was sent); a
  model call's result (`CreateResult`, `{finish_reason, content, ...}`) is the assistant's.
- AgentChat's messages (`TextMessage`, `ToolCallSummaryMessage`, `HandoffMessage`, ...) name
  their sender in `source` (`user` for the task the user gave) beside their class in `type`.
- An agent's turn returns a `Response` whose `chat_message` is its answer; a run returns a
  `TaskResult` whose `messages` are the conversation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import as_str

#: autogen-core's model messages: their class, as `type` records it, and the role it plays.
_MODEL_MESSAGE_ROLES = {
    "SystemMessage": "system",
    "UserMessage": "user",
    "AssistantMessage": "assistant",
    "FunctionExecutionResultMessage": "tool",
}
#: The `source` AgentChat gives the task a user starts a run with.
_USER_SOURCE = "user"
#: The field of an agent's `Response` that holds its answer.
RESPONSE_MESSAGE = "chat_message"
#: The fields of a `FunctionCall` and of a `FunctionExecutionResult`.
_CALL_FIELDS = frozenset({"id", "name", "arguments"})
_RESULT_FIELDS = frozenset({"call_id", "content"})


def message_role(message: Mapping[str, Any]) -> str | None:
    """The role of one of AutoGen's messages (model messages by class, AgentChat's by sender);
    None for anything else. Cheap for other messages: one lookup unless `type` names a class."""
    kind = message.get("type")
    if type(kind) is not str or not kind[:1].isupper():
        return None
    role = _MODEL_MESSAGE_ROLES.get(kind)
    if role is not None:
        return role
    source = message.get("source")
    if kind.endswith(("Message", "Event")) and isinstance(source, str) and source:
        return "user" if source == _USER_SOURCE else "assistant"
    return None


def serialized_part(block: Mapping[str, Any]) -> dict[str, Any] | None:
    """A content block that is a `FunctionCall` (a `tool_call` part, its JSON arguments decoded)
    or a `FunctionExecutionResult` (a `tool_call_response`, `error` when `is_error`); None for any
    other block."""
    if block.keys() >= _CALL_FIELDS and "call_id" not in block:
        return {
            "type": "tool_call",
            "id": as_str(block.get("id")),
            "name": as_str(block.get("name")),
            "arguments": decode_json(block.get("arguments")),
        }
    if block.keys() >= _RESULT_FIELDS:
        return result_part(block)
    return None


def result_part(result: Mapping[str, Any]) -> dict[str, Any]:
    """A `FunctionExecutionResult` as a `tool_call_response` part; `error` marks a result that
    reports the tool failed, which may be the only sign of it (a tool span that stays OK)."""
    part = {
        "type": "tool_call_response",
        "id": as_str(result.get("call_id")),
        "response": result.get("content"),
    }
    if result.get("is_error") is True:
        part["error"] = True
    return part
