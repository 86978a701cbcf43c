"""The OpenTelemetry GenAI semantic conventions: `invoke_agent`, `execute_tool`, `chat` spans."""

from __future__ import annotations

from otel_scorers.conventions.base import ModelCall, RunSpanContent, SpanRole
from otel_scorers.conventions.messages import (
    as_int,
    as_str,
    decode_json,
    genai_messages,
    tool_state,
)
from otel_scorers.model import ToolCall
from otel_scorers.span_record import SpanRecord

OPERATION = "gen_ai.operation.name"
MODEL_OPERATIONS = frozenset({"chat", "generate_content", "text_completion"})


class GenAIConvention:
    name = "genai"
    run_start_names: tuple[str, ...] = ("invoke_agent",)
    run_start_markers: tuple[tuple[str, str | None], ...] = ((OPERATION, "invoke_agent"),)

    def detect(self, span: SpanRecord) -> bool:
        return OPERATION in span.attributes

    def role(self, span: SpanRecord) -> SpanRole | None:
        operation = span.attributes.get(OPERATION)
        if operation == "invoke_agent":
            return "run"
        if operation == "execute_tool":
            return "tool"
        if operation in MODEL_OPERATIONS:
            return "model"
        return None

    def run_content(self, span: SpanRecord) -> RunSpanContent:
        attributes = span.attributes
        return RunSpanContent(
            agent_name=as_str(attributes.get("gen_ai.agent.name")) or _name_suffix(span.name, "invoke_agent"),
            input=genai_messages(attributes.get("gen_ai.input.messages")),
            output=genai_messages(attributes.get("gen_ai.output.messages")),
            model=as_str(attributes.get("gen_ai.request.model")),
            input_tokens=as_int(attributes.get("gen_ai.usage.input_tokens")),
            output_tokens=as_int(attributes.get("gen_ai.usage.output_tokens")),
            conversation_id=as_str(attributes.get("gen_ai.conversation.id")),
        )

    def tool_call(self, span: SpanRecord) -> ToolCall:
        attributes = span.attributes
        result = decode_json(attributes.get("gen_ai.tool.call.result"))
        state, error = tool_state(span, result)
        return ToolCall(
            name=as_str(attributes.get("gen_ai.tool.name"))
            or _name_suffix(span.name, "execute_tool")
            or span.name,
            call_id=as_str(attributes.get("gen_ai.tool.call.id")),
            arguments=decode_json(attributes.get("gen_ai.tool.call.arguments")),
            result=result,
            state=state,
            error=error,
            start_ns=span.start_ns,
            end_ns=span.end_ns,
        )

    def model_call(self, span: SpanRecord) -> ModelCall:
        attributes = span.attributes
        return ModelCall(
            span_id=span.span_id,
            start_ns=span.start_ns,
            input=genai_messages(attributes.get("gen_ai.input.messages")),
            output=genai_messages(attributes.get("gen_ai.output.messages")),
            model=as_str(attributes.get("gen_ai.response.model"))
            or as_str(attributes.get("gen_ai.request.model")),
            input_tokens=as_int(attributes.get("gen_ai.usage.input_tokens")),
            output_tokens=as_int(attributes.get("gen_ai.usage.output_tokens")),
        )


def _name_suffix(span_name: str, operation: str) -> str | None:
    prefix = operation + " "
    return span_name[len(prefix) :] or None if span_name.startswith(prefix) else None
