"""Messages carried by span events: the forms of the GenAI conventions that keep content off the
span's attributes.

Read in this order, first found wins:

1. `gen_ai.client.inference.operation.details` events (current conventions) carrying
   `gen_ai.input.messages` / `gen_ai.output.messages`, possibly one attribute per event.
2. v1.28-1.36 events `gen_ai.system.message`, `gen_ai.user.message`, `gen_ai.assistant.message`,
   `gen_ai.tool.message` (the request) and `gen_ai.choice` (the response), as span events whose
   attributes hold JSON strings.
3. The same events as one `events` JSON attribute (pydantic-ai ≤ 0.8, Logfire), each item an
   event body with its `event.name`.
4. v1.26-1.27 events `gen_ai.content.prompt` / `gen_ai.content.completion` with JSON lists in
   `gen_ai.prompt` / `gen_ai.completion`.

Content comes as plain text, GenAI parts, chat-completion content parts, Bedrock Converse
blocks (`{"text"}`, `{"toolUse"}`, `{"toolResult"}`, as Strands writes them), or a framework's own
serialised blocks (Haystack's, AutoGen's `FunctionCall` and `FunctionExecutionResult`): all end up
as GenAI parts, so the shared fallbacks of the run builder read them like any other messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from otel_scorers.conventions.base import NOT_CAPTURED, Message, Messages
from otel_scorers.conventions.formats import autogen, haystack, langchain, responses_api
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import (
    carries_content,
    genai_messages,
    is_mapping,
    is_placeholder,
)
from otel_scorers.conventions.formats.typed_value import typed_value
from otel_scorers.gen_ai_names import (
    GEN_AI_ASSISTANT_MESSAGE,
    GEN_AI_CHOICE,
    GEN_AI_CLIENT_INFERENCE_OPERATION_DETAILS,
    GEN_AI_COMPLETION,
    GEN_AI_CONTENT_COMPLETION,
    GEN_AI_CONTENT_PROMPT,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_PROMPT,
    GEN_AI_SYSTEM_MESSAGE,
    GEN_AI_TOOL_MESSAGE,
    GEN_AI_USER_MESSAGE,
)
from otel_scorers.span_record import SpanEvent, SpanRecord

DETAILS_EVENT = GEN_AI_CLIENT_INFERENCE_OPERATION_DETAILS
_ROLE_BY_EVENT = {
    GEN_AI_SYSTEM_MESSAGE: "system",
    GEN_AI_USER_MESSAGE: "user",
    GEN_AI_ASSISTANT_MESSAGE: "assistant",
    GEN_AI_TOOL_MESSAGE: "tool",
}
_CHOICE = GEN_AI_CHOICE
_PROMPT_EVENT, _COMPLETION_EVENT = GEN_AI_CONTENT_PROMPT, GEN_AI_CONTENT_COMPLETION


def event_messages(span: SpanRecord) -> tuple[Messages, Messages]:
    """The span's input and output messages from whichever event form it uses."""
    events = span.events
    if events:
        found = _details_messages(events)
        if found is None:
            found = _event_form_messages((event.name, event.attributes) for event in events)
        if found is None:
            found = _prompt_completion_messages(events)
        if found is not None:
            return found
    bodies = span.attributes.get("events")
    if bodies is not None:
        return event_list_messages(bodies)
    return NOT_CAPTURED, NOT_CAPTURED


def event_list_messages(bodies: Any) -> tuple[Messages, Messages]:
    """A JSON list of event bodies, each naming its event in `event.name`."""
    decoded = decode_json(bodies)
    if isinstance(decoded, list):
        items = [item for item in decoded if is_mapping(item)]
        found = _event_form_messages((str(item.get("event.name") or ""), item) for item in items)
        if found is not None:
            return found
    return NOT_CAPTURED, NOT_CAPTURED


def _details_messages(events: Sequence[SpanEvent]) -> tuple[Messages, Messages] | None:
    inputs: list[Messages] = []
    outputs: list[Messages] = []
    for event in events:
        if event.name != DETAILS_EVENT:
            continue
        attributes = event.attributes
        if GEN_AI_INPUT_MESSAGES in attributes:
            inputs.append(genai_messages(attributes[GEN_AI_INPUT_MESSAGES]))
        if GEN_AI_OUTPUT_MESSAGES in attributes:
            outputs.append(genai_messages(attributes[GEN_AI_OUTPUT_MESSAGES]))
    if not inputs and not outputs:
        return None
    return _joined(inputs), _joined(outputs)


def _joined(found: Sequence[Messages]) -> Messages:
    captured = [messages for messages in found if messages.captured]
    if not captured:
        return NOT_CAPTURED
    return Messages(tuple(item for messages in captured for item in messages.items), captured=True)


def _event_form_messages(
    events: Iterable[tuple[str, Mapping[str, Any]]],
) -> tuple[Messages, Messages] | None:
    inputs: list[Message] = []
    outputs: list[Message] = []
    seen = False
    for name, body in events:
        role = _ROLE_BY_EVENT.get(name)
        if role is None and name != _CHOICE:
            continue
        seen = True
        if name == _CHOICE:
            message = _choice_message(body)
            if message is not None:
                outputs.append(message)
            continue
        content = body.get("content")
        if is_placeholder(content):
            continue
        parts = content_parts(content)
        if role == "assistant":
            parts += _tool_call_parts(body.get("tool_calls"))
        elif role == "tool" and content is not None and not _has_response(parts):
            parts = [{"type": "tool_call_response", "id": body.get("id"), "response": decode_json(content)}]
        inputs.append({"role": str(body.get("role") or role), "parts": parts})
    if not seen:
        return None
    return _captured(inputs), _captured(outputs)


def _has_response(parts: list[dict[str, Any]]) -> bool:
    return any(part.get("type") == "tool_call_response" for part in parts)


def _captured(messages: list[Message]) -> Messages:
    """With capture off these events still go out, without content (or with placeholders, or
    with tool calls reduced to id and name): such messages say nothing about the content."""
    if not any(message["parts"] for message in messages) or not carries_content(messages):
        return NOT_CAPTURED
    return Messages(tuple(messages), captured=True)


def _choice_message(body: Mapping[str, Any]) -> Message | None:
    """`gen_ai.choice`: its `message` is a message object, content blocks or plain text."""
    message = body.get("message")
    if message is None or is_placeholder(message):
        return None
    decoded = decode_json(message)
    if is_mapping(decoded) and not _looks_like_blocks(decoded):
        if is_placeholder(decoded.get("content")):
            return None
        parts = content_parts(decoded.get("content")) + _tool_call_parts(decoded.get("tool_calls"))
        return {"role": str(decoded.get("role") or "assistant"), "parts": parts}
    return {"role": "assistant", "parts": content_parts(message)}


def _prompt_completion_messages(events: Sequence[SpanEvent]) -> tuple[Messages, Messages] | None:
    prompt = completion = None
    for event in events:
        if event.name == _PROMPT_EVENT:
            prompt = event.attributes.get(GEN_AI_PROMPT)
        elif event.name == _COMPLETION_EVENT:
            completion = event.attributes.get(GEN_AI_COMPLETION)
    if prompt is None and completion is None:
        return None
    return listed_messages(prompt, "user"), listed_messages(completion, "assistant")


def listed_messages(value: Any, default_role: str) -> Messages:
    """A list of chat-completion messages (`{role, content, tool_calls}`, JSON or not) as messages;
    a tool's message (`{role: tool, tool_call_id, content}`) is the response to that call; a
    message LangChain serialised with its class (`langchain.serialised_message`) is read as one."""
    if value is None or is_placeholder(value):
        return NOT_CAPTURED
    # The messages a tracer recorded tagged with their type (`{"type": "chat_messages", "value": [...]}`).
    decoded = typed_value(decode_json(value))
    if is_mapping(decoded):
        decoded = [decoded]
    elif isinstance(decoded, list) and len(decoded) == 1 and isinstance(one := typed_value(decoded[0]), list):
        decoded = one  # a batch of one conversation (what a LangChain chat model is given)
    if not isinstance(decoded, list):
        # Haystack's tracer writes what it cannot serialise as its Python repr.
        written = haystack.repr_messages(decoded)
        if written.captured:
            return written
        return Messages(({"role": default_role, "parts": content_parts(value)},), captured=True)
    messages: list[Message] = []
    for item in decoded:
        if is_mapping(item):
            serialised = langchain.serialised_message(item) if "role" not in item else None
            if serialised is not None:  # LangChain's, by whatever recorded its model's call
                messages.append(serialised)
                continue
            parts = item.get("parts")
            if isinstance(parts, list) and isinstance(item.get("role"), str) and "content" not in item:
                # Already in the GenAI conventions' shape (`{role, parts}`): kept as it is.
                messages.append({"role": item["role"], "parts": [p for p in parts if is_mapping(p)]})
                continue
            call_id = item.get("tool_call_id")
            if isinstance(call_id, str) and item.get("role") == "tool":
                response = {"type": "tool_call_response", "id": call_id, "response": item.get("content")}
                messages.append({"role": "tool", "parts": [response]})
                continue
            result = item.get("tool_result")
            if is_mapping(result) and isinstance(result.get("tool_request_id"), str):
                # A tool's result as a message of its own, under the id of the call it answers.
                response = {
                    "type": "tool_call_response",
                    "id": result["tool_request_id"],
                    "response": result.get("content"),
                }
                messages.append({"role": "tool", "parts": [response]})
                continue
            # Its content, or its list of content blocks under `contents`.
            content = item.get("content") if "content" in item else item.get("contents")
            calls = item.get("tool_calls") if "tool_calls" in item else item.get("tool_requests")
            parts = content_parts(content) + _tool_call_parts(calls)
            role = item.get("role") or autogen.message_role(item) or default_role
            messages.append({"role": str(role), "parts": parts})
    return Messages(tuple(messages), captured=True)


def content_parts(content: Any) -> list[dict[str, Any]]:
    """Message content in any of the shapes above, as GenAI parts."""
    if content is None:
        return []
    if isinstance(content, str):
        decoded = decode_json(content)
        if (isinstance(decoded, list) or is_mapping(decoded)) and _looks_like_blocks(decoded):
            return content_parts(decoded)
        return [{"type": "text", "content": content}]
    if is_mapping(content):
        content = [content]
    if isinstance(content, list):
        return [part for block in content if (part := _part(block)) is not None]
    return [{"type": "text", "content": str(content)}]


def _looks_like_blocks(decoded: list[Any] | Mapping[str, Any]) -> bool:
    # A user may well type JSON: only known block shapes are read as structure.
    blocks = [decoded] if is_mapping(decoded) else decoded
    return bool(blocks) and all(
        is_mapping(block) and ("type" in block or not _BLOCK_KEYS.isdisjoint(block)) for block in blocks
    )


_BLOCK_KEYS = frozenset({"text", "toolUse", "toolResult", "reasoningContent", "json", "image", "document"})


def _part(block: Any) -> dict[str, Any] | None:
    if isinstance(block, str):
        return {"type": "text", "content": block}
    if not is_mapping(block):
        return None
    kind = block.get("type")
    if (
        (kind == "text" or responses_api.is_text_block(block))
        and "content" not in block
        and isinstance(block.get("text"), str)
    ):
        return {"type": "text", "content": block["text"]}
    if kind == "tool_use":
        return {
            "type": "tool_call",
            "id": block.get("id"),
            "name": block.get("name"),
            "arguments": block.get("input"),
        }
    if kind == "tool_result":
        return {
            "type": "tool_call_response",
            "id": block.get("tool_use_id"),
            "response": block.get("content"),
        }
    if kind is not None:
        return dict(block)
    if len(block) == 1 and "kind" in block:
        # Only the part's kind, its content left out (Pydantic AI 0.x with content off).
        return {"type": str(block["kind"])}
    if isinstance(block.get("text"), str):
        return {"type": "text", "content": block["text"]}
    converse_part = _converse_part(block)
    if converse_part is not None:
        return converse_part
    serialized = haystack.serialized_part(block)
    if serialized is None:
        serialized = autogen.serialized_part(block)
    if serialized is not None:
        return serialized
    if isinstance(block.get("content"), str):  # a block of text with no type: its text
        return {"type": "text", "content": block["content"]}
    key = next(iter(block), None)
    return {"type": str(key), "content": block[key]} if key is not None else None


def _converse_part(block: Mapping[str, Any]) -> dict[str, Any] | None:
    """A block of Bedrock's Converse shape, keyed by what it holds (`toolUse`, `toolResult`,
    `reasoningContent`), as a part; None for any other block."""
    if is_mapping(block.get("toolUse")):
        use = block["toolUse"]
        return {
            "type": "tool_call",
            "id": use.get("toolUseId"),
            "name": use.get("name"),
            "arguments": use.get("input"),
        }
    if is_mapping(block.get("toolResult")):
        result = block["toolResult"]
        return {
            "type": "tool_call_response",
            "id": result.get("toolUseId"),
            "response": result.get("content"),
            **({"status": result["status"]} if "status" in result else {}),
        }
    if is_mapping(block.get("reasoningContent")):
        text = block["reasoningContent"].get("reasoningText")
        content = text.get("text") if is_mapping(text) else None
        return {"type": "reasoning", "content": content}
    return None


def _tool_call_parts(tool_calls: Any) -> list[dict[str, Any]]:
    """Chat-completion `tool_calls`: [{id, type, function: {name, arguments}}]."""
    decoded = decode_json(tool_calls)
    if not isinstance(decoded, list):
        return []
    parts: list[dict[str, Any]] = []
    for call in decoded:
        if not is_mapping(call):
            continue
        function = call.get("function")
        function = function if is_mapping(function) else call
        call_id = call.get("id") if "id" in call else call.get("tool_request_id")
        part = {"type": "tool_call", "id": call_id, "name": function.get("name")}
        # Without content capture the call keeps its id and name only.
        arguments = function.get("arguments") if "arguments" in function else function.get("args")
        if arguments is not None:
            part["arguments"] = decode_json(arguments)
        parts.append(part)
    return parts
