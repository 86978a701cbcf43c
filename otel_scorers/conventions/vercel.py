"""The Vercel AI SDK's `ai.*` spans (AI SDK ≤ 6 telemetry, and AI SDK 7's LegacyOpenTelemetry).

A run is one `ai.generateText` / `ai.streamText` / `ai.generateObject` / `ai.streamObject`
call, named by `ai.telemetry.functionId`; each model step is a `.doGenerate` / `.doStream`
span and each tool execution an `ai.toolCall` span. Values are JSON-stringified: a tool's
string result arrives quoted. A span whose `ai.*` content an instrumentation rewrote into the GenAI
keys (OpenLLMetry JS's span processor: `gen_ai.input.messages`, `gen_ai.tool.name`, ...) is read
from those.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from otel_scorers.conventions import genai
from otel_scorers.conventions.base import (
    Convention,
    Markers,
    Message,
    Messages,
    ModelCall,
    RunSpanContent,
    SpanRole,
)
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import (
    as_int,
    as_str,
    is_mapping,
    last_user_text,
    span_tool_call,
)
from otel_scorers.conventions.genai import answering_model
from otel_scorers.gen_ai_names import GEN_AI_INPUT_MESSAGES, GEN_AI_OUTPUT_MESSAGES, GEN_AI_TOOL_NAME
from otel_scorers.model import ToolCall
from otel_scorers.span_record import SpanRecord

OPERATION_ID = "ai.operationId"
SCOPE = "ai"
RUN_OPERATIONS = ("ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject")
MODEL_SUFFIXES = (".doGenerate", ".doStream")
TOOL_OPERATION = "ai.toolCall"


class VercelAIConvention(Convention):
    name = "vercel-ai"
    run_start_names: tuple[str, ...] = RUN_OPERATIONS
    run_start_markers: tuple[tuple[str, str | None], ...] = tuple((OPERATION_ID, op) for op in RUN_OPERATIONS)

    markers = Markers(keys=frozenset({OPERATION_ID}), scopes=frozenset({SCOPE}))

    def detect(self, span: SpanRecord) -> bool:
        return OPERATION_ID in span.attributes or span.scope == SCOPE

    def role(self, span: SpanRecord) -> SpanRole | None:
        operation = span.attributes.get(OPERATION_ID) or span.name
        if operation in RUN_OPERATIONS:
            return "run"
        if operation == TOOL_OPERATION:
            return "tool"
        if (
            isinstance(operation, str)
            and operation.startswith(RUN_OPERATIONS)
            and operation.endswith(MODEL_SUFFIXES)
        ):
            return "model"
        return None

    def run_content(self, span: SpanRecord) -> RunSpanContent:
        attributes = span.attributes
        input_tokens, output_tokens = _usage(attributes)
        if _rewritten(attributes, "ai.prompt"):
            request, answer = genai.span_messages(span)
            return RunSpanContent(
                agent_name=as_str(attributes.get("ai.telemetry.functionId")),
                input=request,
                output=answer,
                model=as_str(attributes.get("ai.model.id")),
                input_tokens=input_tokens,
                output_tokens=output_tokens,
            )
        return RunSpanContent(
            agent_name=as_str(attributes.get("ai.telemetry.functionId")),
            input_text=_prompt_text(attributes.get("ai.prompt")),
            output_text=_response_text(attributes),
            model=as_str(attributes.get("ai.model.id")),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )

    def tool_call(self, span: SpanRecord) -> ToolCall:
        attributes = span.attributes
        if "ai.toolCall.name" not in attributes and GEN_AI_TOOL_NAME in attributes:
            return genai.tool_call(span)
        result = _json_value(attributes.get("ai.toolCall.result"))
        return span_tool_call(
            span,
            name=as_str(attributes.get("ai.toolCall.name")) or span.name,
            call_id=as_str(attributes.get("ai.toolCall.id")),
            arguments=_json_value(attributes.get("ai.toolCall.args", attributes.get("ai.toolCall.input"))),
            result=result,
        )

    def model_call(self, span: SpanRecord) -> ModelCall:
        attributes = span.attributes
        input_tokens, output_tokens = _usage(attributes)
        if _rewritten(attributes, "ai.prompt.messages"):
            request, answer = genai.span_messages(span)
            return ModelCall(
                span_id=span.span_id,
                start_ns=span.start_ns,
                input=request,
                output=answer,
                model=answering_model(attributes, response="ai.response.model", request="ai.model.id"),
                input_tokens=input_tokens,
                output_tokens=output_tokens,
            )
        return ModelCall(
            span_id=span.span_id,
            start_ns=span.start_ns,
            input=_prompt_messages(attributes.get("ai.prompt.messages")),
            output=_response_messages(attributes),
            model=answering_model(attributes, response="ai.response.model", request="ai.model.id"),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )


def _rewritten(attributes: Mapping[str, Any], own_key: str) -> bool:
    """The span's messages are under the GenAI keys in place of the AI SDK's own `own_key`."""
    return own_key not in attributes and (
        GEN_AI_INPUT_MESSAGES in attributes or GEN_AI_OUTPUT_MESSAGES in attributes
    )


def _usage(attributes: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """AI SDK 5+ says input/output tokens, AI SDK 4 prompt/completion tokens."""
    return (
        as_int(attributes.get("ai.usage.inputTokens", attributes.get("ai.usage.promptTokens"))),
        as_int(attributes.get("ai.usage.outputTokens", attributes.get("ai.usage.completionTokens"))),
    )


def _json_value(value: Any) -> Any:
    """A JSON-stringified value decoded (a quoted string becomes the string, "42" the number)."""
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _prompt_text(value: Any) -> str | None:
    """`ai.prompt` = {system, prompt, messages}: the prompt string, or the last user message."""
    prompt = decode_json(value)
    if not is_mapping(prompt):
        return prompt if isinstance(prompt, str) else None
    if isinstance(prompt.get("prompt"), str):
        return str(prompt["prompt"])
    messages = _prompt_messages(prompt.get("messages") if "messages" in prompt else prompt.get("prompt"))
    return last_user_text(messages.items) if messages.captured else None


def _response_text(attributes: Mapping[str, Any]) -> str | None:
    text = attributes.get("ai.response.text")
    if isinstance(text, str):
        return text
    structured = attributes.get("ai.response.object")  # generateObject: the object is the answer
    return structured if isinstance(structured, str) else None


def _prompt_messages(value: Any) -> Messages:
    decoded = decode_json(value)
    if not isinstance(decoded, list):
        return Messages()
    return Messages(tuple(ai_sdk_message(item) for item in decoded if is_mapping(item)), captured=True)


def ai_sdk_message(item: Mapping[str, Any]) -> Message:
    """An AI SDK message (`content` a string or text / tool-call / tool-result parts), GenAI-shaped."""
    content = item.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if not is_mapping(block):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append({"type": "text", "content": block.get("text")})
        elif kind == "tool-call":
            parts.append(
                {
                    "type": "tool_call",
                    "id": block.get("toolCallId"),
                    "name": block.get("toolName"),
                    "arguments": block.get("input", block.get("args")),
                }
            )
        elif kind == "tool-result":
            output = block.get("output", block.get("result"))
            if is_mapping(output) and "value" in output:  # AI SDK 5+: {"type", "value"}
                output = output["value"]
            parts.append({"type": "tool_call_response", "id": block.get("toolCallId"), "response": output})
    return {"role": str(item.get("role") or ""), "parts": parts}


def _response_messages(attributes: Mapping[str, Any]) -> Messages:
    text = attributes.get("ai.response.text")
    calls = decode_json(attributes.get("ai.response.toolCalls"))
    if text is None and calls is None:
        return Messages()
    parts: list[dict[str, Any]] = []
    if isinstance(text, str) and text:
        parts.append({"type": "text", "content": text})
    for call in calls if isinstance(calls, list) else ():
        if is_mapping(call):
            parts.append(
                {
                    "type": "tool_call",
                    "id": call.get("toolCallId"),
                    "name": call.get("toolName"),
                    "arguments": decode_json(call.get("input", call.get("args"))),
                }
            )
    return Messages(({"role": "assistant", "parts": parts},), captured=True)
