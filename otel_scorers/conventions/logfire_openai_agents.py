"""Logfire's instrumentation of the OpenAI Agents SDK (scope `logfire.openai_agents`).

Span names are Logfire message templates: `Agent run: {name!r}` (the agent in `name`),
`Function: {name}` (arguments in `input`, result in `output`), `Chat completion with ...` /
`Responses API with ...` (the request's messages in `input`, the answer in `output`) and
`Handoff: {from_agent} → {to_agent}`, an agent transition, not a tool call.
"""

from __future__ import annotations

from otel_scorers.conventions.base import Convention, ModelCall, RunSpanContent, SpanRole
from otel_scorers.conventions.formats.genai_events import listed_messages
from otel_scorers.conventions.formats.messages import (
    as_int,
    as_str,
    decode_json,
    handoff_tool_name,
    span_tool_call,
    tool_state,
)
from otel_scorers.conventions.genai import answering_model
from otel_scorers.model import ToolCall
from otel_scorers.span_record import SpanRecord

SCOPE = "logfire.openai_agents"
_RUN = "Agent run:"
_TOOL = "Function:"
_HANDOFF = "Handoff:"
_MODEL = ("Chat completion with", "Responses API with")
#: The root of each Runner.run: every agent of it, handoffs included, runs inside it.
_TRACE = "OpenAI Agents trace:"


class LogfireOpenAIAgentsConvention(Convention):
    name = "logfire_openai_agents"
    run_start_names: tuple[str, ...] = (_RUN, _TRACE)
    run_start_markers: tuple[tuple[str, str | None], ...] = ()

    def detect(self, span: SpanRecord) -> bool:
        return span.scope == SCOPE

    def role(self, span: SpanRecord) -> SpanRole | None:
        name = span.name
        if name.startswith(_RUN):
            return "run"
        if name.startswith((_TOOL, _HANDOFF)):
            return "tool"
        if name.startswith(_MODEL):
            return "model"
        return None

    def run_content(self, span: SpanRecord) -> RunSpanContent:
        # The agent span has no input or output: they come from its model calls.
        return RunSpanContent(agent_name=as_str(span.attributes.get("name")))

    def tool_call(self, span: SpanRecord) -> ToolCall:
        attributes = span.attributes
        if span.name.startswith(_HANDOFF):
            target = as_str(attributes.get("to_agent")) or ""
            return span_tool_call(
                span, name=handoff_tool_name(target), call_id=None, arguments=None, result=None
            )
        result = decode_json(attributes.get("output"))
        state, error = tool_state(span, result)
        if state == "ok" and attributes.get("error") is not None:
            state, error = "error", str(attributes["error"])
        return span_tool_call(
            span,
            name=as_str(attributes.get("name")) or span.name,
            call_id=None,
            arguments=decode_json(attributes.get("input")),
            result=result,
            state=state,
            error=error,
        )

    def model_call(self, span: SpanRecord) -> ModelCall:
        attributes = span.attributes
        return ModelCall(
            span_id=span.span_id,
            start_ns=span.start_ns,
            input=listed_messages(attributes.get("input"), "user"),
            output=listed_messages(attributes.get("output"), "assistant"),
            model=answering_model(attributes),
            input_tokens=as_int(attributes.get("gen_ai.usage.input_tokens")),
            output_tokens=as_int(attributes.get("gen_ai.usage.output_tokens")),
        )

    def internal_tool(self, span: SpanRecord) -> bool:
        return span.name.startswith(_HANDOFF)

    def handoff_target(self, span: SpanRecord) -> str | None:
        return as_str(span.attributes.get("to_agent")) if span.name.startswith(_HANDOFF) else None
