"""Values a tracer records tagged with their type, and a tool's result recorded as the message
that carried it.

Some tracers write each input and output as an object of two fields, the value's type (a short
name) and the value itself: `{"type": "json", "value": {...}}`, `{"type": "text", "value": "..."}`,
`{"type": "chat_messages", "value": [...]}`, a typed value holding another. What was recorded is
the value, whichever reader claimed the span. A tool's result recorded as the chat messages sent
back to the model holds one message, of who sent it and its content: the result is that content.
"""

from __future__ import annotations

import re
from typing import Any

from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import is_mapping

#: The fields of a typed value, and nothing beside them.
TYPED_FIELDS = frozenset({"type", "value"})
#: A type's name: a short identifier (`json`, `text`, `chat_messages`).
_TYPE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_\-]{0,31}")
#: Typed values held inside each other no deeper than this are read.
_MAX_NESTING = 4
#: How the text of a typed value starts.
_TYPED_TEXTS = ('{"type"', '{"value"')
#: The fields of a message carrying a tool's result back to the model.
_RESULT_MESSAGE_FIELDS = frozenset({"role", "content", "name", "tool_call_id"})


def is_typed(value: Any) -> bool:
    """`value` is a typed value: an object of a type's name and a value, nothing else. Decoded
    JSON: a dict, so the cheap checks (its type, its size) are most of the work for the many
    values that are not."""
    return (
        type(value) is dict
        and len(value) == 2
        and value.keys() == TYPED_FIELDS
        and isinstance(kind := value["type"], str)
        and _TYPE_NAME.fullmatch(kind) is not None
    )


def typed_value(value: Any) -> Any:
    """The value a typed value holds, at any nesting, JSON text decoded; any other value as it is.
    Text is decoded first when it may be a typed value (`{"type": ...}` or `{"value": ...}`)."""
    if type(value) is str:
        if not value.startswith(_TYPED_TEXTS):  # the cheap check, for the many texts
            return value
        decoded = decode_json(value)
        if not is_typed(decoded):
            return value
        value = decoded
    elif type(value) is not dict or len(value) != 2:  # most values: no typed value
        return value
    for _ in range(_MAX_NESTING):
        if not is_typed(value):
            return value
        value = decode_json(value["value"]) if _typed_text(value["value"]) else value["value"]
    return value


def _typed_text(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(_TYPED_TEXTS)


def message_carried(value: Any) -> Any:
    """A tool's result recorded as the one message that carried it back (`[{"role": "tool",
    "content": "Sunny"}]`): that message's content, decoded when it is JSON; any other value as
    it is."""
    if not isinstance(value, list) or len(value) != 1:
        return value
    message = value[0]
    if (
        not is_mapping(message)
        or not isinstance(message.get("content"), str)
        or "role" not in message
        or not message.keys() <= _RESULT_MESSAGE_FIELDS
    ):
        return value
    return decode_json(message["content"])


def typed_call_values(arguments: Any, result: Any) -> tuple[Any, Any]:
    """A tool call's arguments and result as the values their tracer recorded typed hold
    (`typed_value`), a typed result carried back in one message read as its content
    (`message_carried`); each value not typed as it is."""
    # Most calls: neither value may be typed (`typed_value`'s cheap checks, in line).
    if (
        (type(arguments) is not dict or len(arguments) != 2)
        and (type(arguments) is not str or not arguments.startswith(_TYPED_TEXTS))
        and (type(result) is not dict or len(result) != 2)
        and (type(result) is not str or not result.startswith(_TYPED_TEXTS))
    ):
        return arguments, result
    typed_result = typed_value(result)
    return typed_value(arguments), message_carried(typed_result) if typed_result is not result else result
