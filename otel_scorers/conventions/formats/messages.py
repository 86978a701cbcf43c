"""Reading values that conventions share: JSON-or-structured attributes, GenAI messages, tool states."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson
from typing_extensions import TypeIs

from otel_scorers.conventions.base import Message, Messages
from otel_scorers.conventions.formats import aliased_parts, responses_api
from otel_scorers.conventions.formats.json_values import decode_json, decode_json_strict, python_literal
from otel_scorers.conventions.formats.parsed_texts import parsed_so_far
from otel_scorers.gen_ai_names import GEN_AI_TOOL_ERROR_TYPE
from otel_scorers.model import ToolCall, ToolState, made_tool_call
from otel_scorers.span_record import SpanRecord

#: What instrumentations write in place of content when capture is off.
PLACEHOLDERS = frozenset({"[REDACTED]", "[redacted]", "__REDACTED__", "** MASKED **"})
#: No placeholder is longer: a longer string that neither starts nor ends with whitespace is not one.
_LONGEST_PLACEHOLDER = max(len(placeholder) for placeholder in PLACEHOLDERS)


def is_placeholder(value: Any) -> bool:
    if type(value) is not str and not isinstance(value, str):
        return False
    # Captured content is usually long: answered without copying it to strip it.
    if len(value) > _LONGEST_PLACEHOLDER and not (value[0].isspace() or value[-1].isspace()):
        return False
    return value.strip() in PLACEHOLDERS


def decode_content(value: Any) -> Any:
    """A captured value (tool arguments, a result) decoded; None for a capture-off placeholder."""
    if type(value) is str and value and not (value[0].isspace() or value[-1].isspace()):
        # Most captured values: text without padding, nothing to strip (`is_placeholder`,
        # `decode_json`), decided in line, one call a value where those were three.
        first = value[0]
        if value in PLACEHOLDERS:
            return None
        if first == "{" or first == "[" or first == '"':
            try:
                return orjson.loads(value)
            except orjson.JSONDecodeError:
                return python_literal(value, value) if first != '"' else value
        return orjson.loads(value) if value in _JSON_WORDS else value
    return None if is_placeholder(value) else decode_json(value)


#: The JSON texts that are neither an object, a list nor a string.
_JSON_WORDS = frozenset({"null", "true", "false"})


def genai_messages(value: Any) -> Messages:
    """`gen_ai.input.messages` / `gen_ai.output.messages` (JSON string or structured)."""
    if value is None:
        return Messages()
    if type(value) is str:
        parsed = parsed_so_far()
        if parsed is not None:
            found = parsed.get(value)
            if found is None:
                found = parsed[value] = decode_messages(value)
            return found
    return decode_messages(value)


def decode_messages(value: Any) -> Messages:
    """The messages `value` holds, decoded: `genai_messages` without remembering the text."""
    if (
        type(value) is str
        and len(value) > _LONGEST_PLACEHOLDER
        and not (value[0].isspace() or value[-1].isspace())
    ):
        # Captured content, too long to be a placeholder (`is_placeholder`): decoded at once.
        try:
            decoded = orjson.loads(value)
        except orjson.JSONDecodeError:
            return Messages()
    else:
        if is_placeholder(value):
            return Messages()
        decoded = decode_json_strict(value)
    if type(decoded) is not list:  # a list of messages is what is written: no further checks
        if not is_mapping(decoded):
            return Messages()
        decoded = [decoded]
    messages: list[Message] = []
    # `carries_content`, decided in the same walk while every message has the GenAI shape and
    # every part is a dict (`shaped`): whether any part holds more than its shape, any part at all.
    shaped, carried, no_parts = True, False, True
    for item in decoded:
        if type(item) is dict:
            # The shape the GenAI conventions write, normalized without a call: a role and a
            # list of parts (`_normalize_message` for every other).
            role, parts = item.get("role"), item.get("parts")
            if type(role) is str and type(parts) is list:
                for part in parts:
                    if type(part) is not dict:  # decoded JSON: only a malformed part is no dict
                        parts = [part for part in parts if type(part) is dict or is_mapping(part)]
                        shaped = False
                        break
                    no_parts = False
                    if aliased_parts.ALIAS in part:  # one lookup: a part named otherwise is rare
                        aliased_parts.name_aliased_call(part)
                    if not carried and not part.keys() <= _SHAPE_KEYS:
                        carried = True
                if len(item) == 2 and parts is item["parts"] and next(iter(item)) == "role":
                    messages.append(item)  # the message as normalized, its keys in that order
                    continue
                # The decoded item is let go: its list of parts is the message's own.
                normalized = {"role": role, "parts": parts}
                name = item.get("name")
                if name:
                    normalized["name"] = name
                messages.append(normalized)
                continue
        if is_mapping(item):
            shaped = False
            messages.append(_normalize_message(item))
    found = tuple(messages)
    # Made as a tuple: `Messages(...)`, a named tuple's constructor, is a Python call (one a text).
    return tuple.__new__(Messages, (found, (carried or no_parts) if shaped else carries_content(found)))


def is_mapping(value: Any) -> TypeIs[Mapping[Any, Any]]:
    """`isinstance(value, Mapping)`, answered first for a plain dict (what decoded JSON holds)
    and for the values decoded JSON holds that are not one (text, a number, null, a list).
    The check against the ABC costs about ten times a type comparison, and run assembly makes
    it for every message, part, argument and result of a run."""
    return type(value) is dict or (type(value) not in _NOT_MAPPINGS and isinstance(value, Mapping))


_NOT_MAPPINGS = frozenset({str, int, float, bool, list, type(None)})


def carries_content(messages: Sequence[Message]) -> bool:
    """With content capture off some instrumentations keep the parts' type, id and name but
    drop their text, arguments and results: such messages say nothing about the content."""
    no_parts = True
    for message in messages:
        for part in message.get("parts", ()):
            no_parts = False
            for key in part:
                if key not in _SHAPE_KEYS:
                    return True
    return no_parts


_SHAPE_KEYS = frozenset({"type", "id", "name"})


def _normalize_message(message: Mapping[str, Any]) -> Message:
    parts = message.get("parts")
    role = message.get("role")
    if parts is None and "content" in message:
        # Older single-content shape: {"role", "content": str | [parts]}.
        content = message.get("content")
        parts = (
            [{"type": "text", "content": content}]
            if isinstance(content, str)
            else responses_api.text_blocks(content)
        )
    elif parts is None and responses_api.is_call_item(message):
        # An OpenAI Responses API item, in a list of messages: a call the model asked for, or
        # what it was sent back for one.
        parts, role = responses_api.call_parts(message)
    normalized: dict[str, Any] = {
        "role": role if type(role) is str else str(role or ""),
        "parts": [part for part in parts if type(part) is dict or is_mapping(part)]
        if type(parts) is list or isinstance(parts, list)
        else [],
    }
    name = message.get("name")
    if name:
        normalized["name"] = name
    return normalized


def text_of(message: Message) -> str:
    """The message's text parts joined (reasoning and tool parts excluded)."""
    texts = []
    for part in message.get("parts", ()):  # a loop, not a comprehension (a call of its own)
        if part.get("type") == "text" and isinstance(part.get("content"), str):
            texts.append(part.get("content"))
    return "".join(texts)


def has_text(message: Message) -> bool:
    # A loop, not `any` over a generator (a frame of its own): asked of every run's messages.
    for part in message.get("parts", ()):  # noqa: SIM110
        if part.get("type") == "text":
            return True
    return False


def last_user_text(messages: Sequence[Message]) -> str | None:
    """The text of the last `user` message that has text (tool results may also come as user)."""
    for message in reversed(messages):
        if message.get("role") == "user" and has_text(message):
            return text_of(message)
    return None


def last_assistant_text(messages: Sequence[Message]) -> str | None:
    for message in reversed(messages):
        if message.get("role") in ("assistant", "model") and has_text(message):
            return text_of(message)
    return None


def tool_call_parts(messages: Iterable[Message]) -> list[Mapping[str, Any]]:
    return [
        part for message in messages for part in message.get("parts", ()) if part.get("type") == "tool_call"
    ]


def tool_response_parts(messages: Iterable[Message]) -> list[Mapping[str, Any]]:
    return [
        part
        for message in messages
        for part in message.get("parts", ())
        if part.get("type") == "tool_call_response"
    ]


def tool_response_value(part: Mapping[str, Any]) -> Any:
    """The spec calls it `response`; pydantic-ai and the registry example `result`."""
    return part["response"] if "response" in part else part.get("result")


def span_failed(span: SpanRecord) -> str | None:
    """Why a span failed (its error message or type, `error.type` also under the GenAI tool
    keys), or None when it did not."""
    attributes = span.attributes
    events = span.events
    exception = next((event for event in events if event.name == "exception"), None) if events else None
    if not (
        span.status == "error"
        or "error.type" in attributes
        or exception is not None
        or GEN_AI_TOOL_ERROR_TYPE in attributes
    ):
        return None
    if exception is not None:
        message = exception.attributes.get("exception.message")
        kind = exception.attributes.get("exception.type")
        if message or kind:
            return f"{kind}: {message}" if kind and message else str(message or kind)
    return str(
        span.status_message
        or attributes.get("error.message")
        or attributes.get("error.type")
        or attributes.get(GEN_AI_TOOL_ERROR_TYPE)
        or "error"
    )


def result_has_error(result: Any) -> bool:
    """A result object with a top-level `error` that JavaScript reads as true (Mastra's rule): any
    object or array (even empty), a non-empty string, a non-zero number, `true`."""
    # Most results are text or a plain dict: answered without the check against the ABC.
    if type(result) is str or not is_mapping(result) or "error" not in result:
        return False
    error = result["error"]
    if error is None or error is False:
        return False
    if isinstance(error, (Mapping, list, tuple)) or error is True:
        return True
    if isinstance(error, str):
        return error != ""
    if isinstance(error, (int, float)):
        return error == error and error != 0  # NaN and 0 are false
    return True


def result_error_text(result: Mapping[str, Any]) -> str:
    """The `error` of a result that has one, as text: a string as is, anything else as JSON."""
    error = result["error"]
    return error if isinstance(error, str) else orjson.dumps(error, default=str).decode()[:1000]


def tool_state(span: SpanRecord, result: Any) -> tuple[ToolState, str | None]:
    if span.end_ns is None:  # `SpanRecord.ended`, without the property's call
        return "incomplete", None
    failure = span_failed(span)
    if failure is not None:
        return "error", failure
    if result_has_error(result):
        return "result_error", result_error_text(result)
    return "ok", None


def as_int(value: Any) -> int | None:
    if type(value) is int:  # what token counts are: no further checks
        return value
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) else None  # NaN and infinities count nothing
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return None
    return None


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def span_tool_call(
    span: SpanRecord,
    *,
    name: str,
    call_id: str | None,
    arguments: Any,
    result: Any,
    state: ToolState | None = None,
    error: str | None = None,
) -> ToolCall:
    """A tool call read from its span. Without `state`, the span and the result decide it
    (`tool_state`). A failed call keeps what its span recorded as its result: run assembly
    says what that is (`run_builder`: a failed call has no result, only its error)."""
    if state is None:
        attributes = span.attributes
        if (
            span.end_ns is not None
            and span.status != "error"
            and not span.events
            and "error.type" not in attributes
            and GEN_AI_TOOL_ERROR_TYPE not in attributes
            and (result is None or type(result) is str)
        ):
            # `tool_state`'s most common answer, in line: an ended span that says no failure
            # (`span_failed`), and a result that is no object (`result_has_error`).
            state, error = "ok", None
        else:
            state, error = tool_state(span, result)
    # Through its slots' setters (`made_tool_call`): one is made for every tool span.
    return made_tool_call(name, call_id, arguments, result, state, error, span.start_ns, span.end_ns)


def handoff_agent(arguments: Any) -> str | None:
    """The agent a handoff tool call names in its `agent_name` argument (Strands' Swarm
    `handoff_to_agent`, Google ADK's `transfer_to_agent`); None when content was not captured."""
    target = arguments.get("agent_name") if isinstance(arguments, Mapping) else None
    return target if isinstance(target, str) and target else None


def handoff_tool_name(agent: str) -> str:
    """The tool name OpenAI Agents gives the model for a handoff: transfer_to_{agent}, snake-cased."""
    return "transfer_to_" + re.sub(r"[^0-9a-zA-Z_]", "_", agent).lower()
