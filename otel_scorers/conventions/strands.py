"""Strands Agents (`gen_ai.provider.name` or `gen_ai.system` = `strands-agents`).

Spans follow the GenAI names (`invoke_agent` > `execute_event_loop_cycle` > `chat` /
`execute_tool`); content travels in span events, which `genai_events` reads: in the default
mode as v1.28-style events with Bedrock content blocks, in the latest mode as
`gen_ai.client.inference.operation.details` events. Strands-specific: on a tool span the
default mode's `gen_ai.tool.message` event holds the call's arguments and its `gen_ai.choice`
the result; results are content blocks (`[{"text": ...}]`), unwrapped to what the tool returned.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from otel_scorers.conventions import genai
from otel_scorers.conventions.base import Convention, RunSpanContent
from otel_scorers.conventions.formats.converse import unwrap_blocks
from otel_scorers.conventions.formats.messages import (
    decode_content,
    handoff_agent,
    last_user_text,
    span_tool_call,
    tool_state,
)
from otel_scorers.conventions.formats.swarm_context import swarm_request
from otel_scorers.gen_ai_names import (
    GEN_AI_CHOICE,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_SYSTEM,
    GEN_AI_TOOL_MESSAGE,
    GEN_AI_TOOL_NAME,
    GEN_AI_TOOL_STATUS,
)
from otel_scorers.model import ToolCall
from otel_scorers.span_record import SpanRecord

PROVIDER = "strands-agents"
HANDOFF = "handoff_to_agent"


class StrandsConvention(Convention):
    name = "strands"
    # A Swarm's agents run one after another inside `invoke_swarm`: the trace stays open until it ends.
    run_start_names: tuple[str, ...] = ("invoke_agent", "invoke_swarm")
    run_start_markers: tuple[tuple[str, str | None], ...] = ()

    detection_values = (GEN_AI_PROVIDER_NAME, GEN_AI_SYSTEM)

    def detect(self, span: SpanRecord) -> bool:
        attributes = span.attributes
        return attributes.get(GEN_AI_PROVIDER_NAME) == PROVIDER or attributes.get(GEN_AI_SYSTEM) == PROVIDER

    role = staticmethod(genai.operation_role)
    model_call = staticmethod(genai.model_call)
    documents = staticmethod(genai.documents)

    def run_content(self, span: SpanRecord) -> RunSpanContent:
        content = genai.run_content(span)
        if not content.input.captured:
            return content
        request = swarm_request(last_user_text(content.input.items))
        return replace(content, input_text=request) if request is not None else content

    def internal_tool(self, span: SpanRecord) -> bool:
        """A Swarm's `handoff_to_agent` passes the task to another agent: a handoff, not a call."""
        return span.attributes.get(GEN_AI_TOOL_NAME) == HANDOFF

    def handoff_target(self, span: SpanRecord) -> str | None:
        """The agent a Swarm's `handoff_to_agent` passes the task to (None without content)."""
        return handoff_agent(self.tool_call(span).arguments) if self.internal_tool(span) else None

    def tool_call(self, span: SpanRecord) -> ToolCall:
        call = genai.tool_call(span)
        arguments, result = call.arguments, call.result
        if arguments is None or result is None:
            event_arguments, event_result = _tool_events(span)
            arguments = arguments if arguments is not None else event_arguments
            result = result if result is not None else event_result
        result = unwrap_blocks(result)
        state, error = tool_state(span, result)
        if state == "ok" and any(span.attributes.get(key) == "error" for key in _TOOL_STATUS_KEYS):
            # The result Strands sends the model for a failed tool is the error's text.
            state, error = "error", result if isinstance(result, str) and result else "error"
        return span_tool_call(
            span,
            name=call.name,
            call_id=call.call_id,
            arguments=arguments,
            result=result,
            state=state,
            error=error,
        )


#: Where Strands writes a tool's status: `tool.status` before it took the GenAI name (1.0).
_TOOL_STATUS_KEYS = (GEN_AI_TOOL_STATUS, "tool.status")


def _tool_events(span: SpanRecord) -> tuple[Any, Any]:
    """Default mode: `gen_ai.tool.message` {content: arguments}, `gen_ai.choice` {message: result}."""
    arguments: Any = None
    result: Any = None
    for event in span.events:
        if event.name == GEN_AI_TOOL_MESSAGE:
            arguments = decode_content(event.attributes.get("content"))
        elif event.name == GEN_AI_CHOICE:
            result = decode_content(event.attributes.get("message"))
    return arguments, result
