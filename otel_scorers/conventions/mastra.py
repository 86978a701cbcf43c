"""Mastra's OpenTelemetry spans (`mastra.span.type`): its exporter, 1.x and 0.3.x, and its bridge.

1.x writes GenAI spans (`invoke_agent {name}`, `chat {model}` with GenAI messages,
`execute_tool {tool}`) and keeps the agent's own input and output in `mastra.agent_run.input` /
`mastra.agent_run.output` (what was passed to `generate`, and `{"text", ...}`). 0.3.x names
spans `agent.{id}`, `chat {model}`, `tool.execute {id}`, with the content in `input` / `output`
(model spans: `gen_ai.prompt` / `gen_ai.completion`, AI SDK shaped; tools: `gen_ai.tool.input` /
`gen_ai.tool.output`, `gen_ai.tool.success`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions.base import Convention, Markers, Messages, ModelCall, RunSpanContent, SpanRole
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import (
    as_int,
    as_str,
    genai_messages,
    last_user_text,
    result_error_text,
    result_has_error,
    span_failed,
    span_tool_call,
)
from otel_scorers.conventions.formats.recorded_call import first_argument
from otel_scorers.conventions.genai import answering_model
from otel_scorers.conventions.vercel import ai_sdk_message
from otel_scorers.gen_ai_names import (
    GEN_AI_AGENT_ID,
    GEN_AI_AGENT_NAME,
    GEN_AI_COMPLETION,
    GEN_AI_CONVERSATION_ID,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OPERATION_NAME,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_PROMPT,
    GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_CALL_RESULT,
    GEN_AI_TOOL_INPUT,
    GEN_AI_TOOL_NAME,
    GEN_AI_TOOL_OUTPUT,
    GEN_AI_TOOL_SUCCESS,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
)
from otel_scorers.model import ToolCall, ToolState
from otel_scorers.span_record import SpanRecord

SPAN_TYPE = "mastra.span.type"
EXPORTER_SCOPE = "@mastra/otel-exporter"
#: `@mastra/otel-bridge` makes Mastra's spans spans of the application's tracer provider. It
#: starts each one under Mastra's own name (`agent run: '{id}'`) with no attributes, and renames
#: it and writes every attribute when it ends.
BRIDGE_SCOPE = "@mastra/otel-bridge"
SCOPES = frozenset({EXPORTER_SCOPE, BRIDGE_SCOPE, "@mastra/otel"})
RUN_TYPES = frozenset({"agent_run"})
MODEL_TYPES = frozenset({"model_generation", "llm_generation"})
#: One model call of a `model_generation` loop. `@mastra/otel-exporter` 1.4 makes these the
#: `chat {model}` spans (output messages, each call's usage) and leaves the loop span named by
#: its type (`model_generation {model}`, Mastra's own keys only); `@mastra/otel-bridge` 1.5 does
#: the opposite, so whichever of the two is `chat` is the model span, and usage is not counted twice.
INFERENCE_TYPE = "model_inference"
OPERATION = GEN_AI_OPERATION_NAME
TOOL_TYPES = frozenset({"tool_call", "mcp_tool_call"})


class MastraConvention(Convention):
    name = "mastra"
    run_start_names: tuple[str, ...] = ()
    run_start_markers: tuple[tuple[str, str | None], ...] = ((SPAN_TYPE, "agent_run"),)
    run_start_scopes: tuple[str, ...] = (BRIDGE_SCOPE,)

    markers = Markers(keys=frozenset({SPAN_TYPE}), scopes=SCOPES)

    def detect(self, span: SpanRecord) -> bool:
        return SPAN_TYPE in span.attributes or span.scope in SCOPES

    def role(self, span: SpanRecord) -> SpanRole | None:
        span_type = span.attributes.get(SPAN_TYPE)
        if span_type in RUN_TYPES:
            return "run"
        if span_type in TOOL_TYPES:
            return "tool"
        if span_type in MODEL_TYPES:
            return None if span.attributes.get(OPERATION) == span_type else "model"
        if span_type == INFERENCE_TYPE and span.attributes.get(OPERATION) == "chat":
            return "model"
        return None

    def run_content(self, span: SpanRecord) -> RunSpanContent:
        attributes = span.attributes
        return RunSpanContent(
            agent_name=as_str(attributes.get(GEN_AI_AGENT_NAME))
            or as_str(attributes.get(GEN_AI_AGENT_ID))
            or as_str(attributes.get("agent.id"))
            or _name_suffix(span.name),
            input_text=_input_text(attributes.get("mastra.agent_run.input", attributes.get("input"))),
            output_text=_output_text(attributes.get("mastra.agent_run.output", attributes.get("output"))),
            input_tokens=as_int(attributes.get(GEN_AI_USAGE_INPUT_TOKENS)),
            output_tokens=as_int(attributes.get(GEN_AI_USAGE_OUTPUT_TOKENS)),
            conversation_id=as_str(attributes.get(GEN_AI_CONVERSATION_ID)),
        )

    def tool_call(self, span: SpanRecord) -> ToolCall:
        attributes = span.attributes
        # @mastra/arize writes the result as OpenInference's `output.value` beside `mastra.span.type`.
        result = decode_json(
            attributes.get(
                GEN_AI_TOOL_CALL_RESULT,
                attributes.get(GEN_AI_TOOL_OUTPUT, attributes.get("output", attributes.get("output.value"))),
            )
        )
        state: ToolState = "ok"
        error = span_failed(span)
        if not span.ended:
            state, error = "incomplete", None
        elif (
            error is not None
            or attributes.get(GEN_AI_TOOL_SUCCESS) is False
            or attributes.get("error") is True
        ):
            state = "error"
            error = error or as_str(attributes.get("error.message")) or "tool failed"
        elif result_has_error(result):
            state, error = "result_error", result_error_text(result)
        return span_tool_call(
            span,
            name=as_str(attributes.get(GEN_AI_TOOL_NAME)) or _name_suffix(span.name) or span.name,
            call_id=as_str(attributes.get(GEN_AI_TOOL_CALL_ID)),
            arguments=decode_json(
                attributes.get(
                    GEN_AI_TOOL_CALL_ARGUMENTS,
                    attributes.get(GEN_AI_TOOL_INPUT, attributes.get("input", attributes.get("input.value"))),
                )
            ),
            result=result,
            state=state,
            error=error,
        )

    def model_call(self, span: SpanRecord) -> ModelCall:
        attributes = span.attributes
        input_messages = genai_messages(attributes.get(GEN_AI_INPUT_MESSAGES))
        if not input_messages.captured:
            input_messages = _prompt_messages(attributes.get(GEN_AI_PROMPT, attributes.get("input")))
        output_messages = genai_messages(attributes.get(GEN_AI_OUTPUT_MESSAGES))
        if not output_messages.captured:
            output_messages = _completion_messages(
                attributes.get(GEN_AI_COMPLETION, attributes.get("output"))
            )
        return ModelCall(
            span_id=span.span_id,
            start_ns=span.start_ns,
            input=input_messages,
            output=output_messages,
            model=answering_model(attributes),
            input_tokens=as_int(attributes.get(GEN_AI_USAGE_INPUT_TOKENS)),
            output_tokens=as_int(attributes.get(GEN_AI_USAGE_OUTPUT_TOKENS)),
        )


def _name_suffix(span_name: str) -> str | None:
    """`invoke_agent weather`, `execute_tool get_weather`, `tool.execute get_weather`, `agent.weather`."""
    for prefix in ("invoke_agent ", "execute_tool ", "tool.execute ", "agent."):
        if span_name.startswith(prefix):
            return span_name[len(prefix) :] or None
    return None


def _input_text(value: Any) -> str | None:
    """What was passed to `agent.generate`: a string, a list of strings or of messages, also
    when recorded as the function's call (`recorded_call.first_argument`)."""
    decoded = first_argument(decode_json(value))
    if isinstance(decoded, str):
        return decoded
    if isinstance(decoded, Mapping):
        decoded = decoded.get("messages", [decoded])
    if not isinstance(decoded, list):
        return None
    if decoded and all(isinstance(item, str) for item in decoded):
        return str(decoded[-1])
    messages = [ai_sdk_message(item) for item in decoded if isinstance(item, Mapping)]
    return last_user_text(messages)


def _output_text(value: Any) -> str | None:
    """The run's result: `{"text", "object", ...}` (1.x), or the text itself."""
    if value is None:
        return None
    decoded = decode_json(value)
    if isinstance(decoded, Mapping):
        text = decoded.get("text")
        if isinstance(text, str):
            return text
        return value if isinstance(value, str) else None
    return decoded if isinstance(decoded, str) else value if isinstance(value, str) else None


def _prompt_messages(value: Any) -> Messages:
    decoded = decode_json(value)
    if isinstance(decoded, Mapping):
        decoded = decoded.get("messages")
    if isinstance(decoded, str):
        return Messages(({"role": "user", "parts": [{"type": "text", "content": decoded}]},), captured=True)
    if not isinstance(decoded, list):
        return Messages()
    return Messages(
        tuple(ai_sdk_message(item) for item in decoded if isinstance(item, Mapping)), captured=True
    )


def _completion_messages(value: Any) -> Messages:
    """0.3.x model output: `{"text", "toolCalls": [{toolCallId, toolName, args|input}]}` or text."""
    if value is None:
        return Messages()
    decoded = decode_json(value)
    parts: list[dict[str, Any]] = []
    if isinstance(decoded, str):
        parts.append({"type": "text", "content": decoded})
    elif isinstance(decoded, Mapping):
        if isinstance(decoded.get("text"), str) and decoded["text"]:
            parts.append({"type": "text", "content": decoded["text"]})
        for call in decoded.get("toolCalls") or ():
            if isinstance(call, Mapping):
                parts.append(
                    {
                        "type": "tool_call",
                        "id": call.get("toolCallId"),
                        "name": call.get("toolName"),
                        "arguments": call.get("input", call.get("args")),
                    }
                )
    else:
        return Messages()
    return Messages(({"role": "assistant", "parts": parts},), captured=True)
