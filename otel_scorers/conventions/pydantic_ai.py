"""Pydantic AI's instrumentation (scope `pydantic-ai`), formats v1 to v6.

The run span holds the whole conversation in `pydantic_ai.all_messages`, where
`pydantic_ai.new_message_index` marks where this run's messages start (earlier ones are the
history it was given), and the answer in `final_result`. Format v1 (pydantic-ai 0.x's default)
keeps the conversation as events in `all_messages_events`, and marks no start: a run given a
history takes its request from its first model call. Format v2 names its spans `agent run` and
`running tool` and puts tool arguments and results in `tool_arguments` / `tool_response`; v3+
uses the GenAI names. Chat spans follow the GenAI conventions (older releases: the `events`
attribute, which `genai_events` reads).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import orjson

from otel_scorers.conventions import genai
from otel_scorers.conventions.base import (
    NOT_CAPTURED,
    Convention,
    Markers,
    Message,
    Messages,
    ModelCall,
    RunSpanContent,
    SpanRole,
)
from otel_scorers.conventions.formats.genai_events import event_list_messages
from otel_scorers.conventions.formats.messages import (
    as_int,
    as_str,
    decode_content,
    genai_messages,
    has_text,
    is_placeholder,
    text_of,
    tool_call_parts,
)
from otel_scorers.conventions.genai import input_tokens, name_suffix, output_tokens
from otel_scorers.gen_ai_names import (
    GEN_AI_AGENT_NAME,
    GEN_AI_AGGREGATED_USAGE_INPUT_TOKENS,
    GEN_AI_AGGREGATED_USAGE_OUTPUT_TOKENS,
    GEN_AI_CONVERSATION_ID,
    GEN_AI_REQUEST_MODEL,
)
from otel_scorers.model import ToolCall
from otel_scorers.span_record import SpanRecord

SCOPE = "pydantic-ai"
ALL_MESSAGES = "pydantic_ai.all_messages"
_RUN_V2, _TOOL_V2 = "agent run", "running tool"
#: Format v1 kept the run's messages as a list of v1.28-style event bodies.
_EVENTS_V1 = "all_messages_events"


class PydanticAIConvention(Convention):
    name = "pydantic_ai"
    run_start_names: tuple[str, ...] = (_RUN_V2, "invoke_agent")
    run_start_markers: tuple[tuple[str, str | None], ...] = ()

    markers = Markers(
        keys=frozenset({ALL_MESSAGES}), scopes=frozenset({SCOPE}), names=frozenset({_RUN_V2, _TOOL_V2})
    )

    def detect(self, span: SpanRecord) -> bool:
        return span.scope == SCOPE or ALL_MESSAGES in span.attributes or span.name in (_RUN_V2, _TOOL_V2)

    def role(self, span: SpanRecord) -> SpanRole | None:
        role = genai.operation_role(span)
        if role == "run" or span.name == _RUN_V2:
            return "run"
        if role == "tool" or span.name == _TOOL_V2:
            return "tool"
        return "model" if role == "model" else None

    def run_content(self, span: SpanRecord) -> RunSpanContent:
        attributes = span.attributes
        messages = genai_messages(attributes.get(ALL_MESSAGES))
        if not messages.captured and _EVENTS_V1 in attributes:
            request, response = event_list_messages(attributes[_EVENTS_V1])
            messages = Messages(request.items + response.items, captured=request.captured)
        index = attributes.get("pydantic_ai.new_message_index")
        if index is None and _EVENTS_V1 in attributes and _given_history(messages.items):
            # Format v1 does not say where this run's messages start: the run's first model
            # call, asked with the history and the new request, says which the request is.
            messages = NOT_CAPTURED
        new_messages = messages.items[as_int(index) or 0 :]
        aggregated_input = as_int(attributes.get(GEN_AI_AGGREGATED_USAGE_INPUT_TOKENS))
        aggregated_output = as_int(attributes.get(GEN_AI_AGGREGATED_USAGE_OUTPUT_TOKENS))
        aggregated = aggregated_input is not None or aggregated_output is not None
        return RunSpanContent(
            agent_name=as_str(attributes.get(GEN_AI_AGENT_NAME))
            or as_str(attributes.get("agent_name"))
            or name_suffix(span.name, "invoke_agent"),
            input=Messages(new_messages, captured=True) if messages.captured else NOT_CAPTURED,
            input_text=first_turn_text(new_messages) if messages.captured else None,
            output_text=_final_result(attributes.get("final_result")),
            model=as_str(attributes.get("model_name")) or as_str(attributes.get(GEN_AI_REQUEST_MODEL)),
            input_tokens=aggregated_input if aggregated else input_tokens(attributes),
            output_tokens=aggregated_output if aggregated else output_tokens(attributes),
            conversation_id=as_str(attributes.get(GEN_AI_CONVERSATION_ID)),
        )

    def tool_call(self, span: SpanRecord) -> ToolCall:
        attributes = span.attributes
        return genai.tool_call(span, attributes.get("tool_arguments"), attributes.get("tool_response"))

    def model_call(self, span: SpanRecord) -> ModelCall:
        call = genai.model_call(span)
        if not call.output.captured or not tool_call_parts(call.output.items):
            return call
        output = _answers_from_output_tools(call.output, _output_tool_names(span))
        return replace(call, output=output)


def _output_tool_names(span: SpanRecord) -> frozenset[str]:
    """The tools through which the model gives its structured answer (`output_type`): calling
    one is answering, not calling a tool, and no tool span ever answers it."""
    raw = span.attributes.get("model_request_parameters")
    if isinstance(raw, str) and '"output_tools":[]' in raw:
        return frozenset()  # plain text output; spares decoding the tool definitions
    parameters = decode_content(raw) if raw is not None else None
    if not isinstance(parameters, Mapping):
        return _DEFAULT_OUTPUT_TOOLS
    tools = parameters.get("output_tools")
    if not isinstance(tools, list):
        return _DEFAULT_OUTPUT_TOOLS
    return frozenset(
        tool["name"] for tool in tools if isinstance(tool, Mapping) and isinstance(tool.get("name"), str)
    )


#: pydantic-ai's name for the output tool when the span does not list its tools.
_DEFAULT_OUTPUT_TOOLS = frozenset({"final_result"})


def _answers_from_output_tools(messages: Messages, names: frozenset[str]) -> Messages:
    """Output-tool calls become the answer they carry, as JSON text (what `final_result` holds)."""
    if not names:
        return messages
    rewritten = []
    for message in messages.items:
        parts = []
        for part in message.get("parts", ()):
            if part.get("type") != "tool_call" or part.get("name") not in names:
                parts.append(part)
            elif part.get("arguments") is not None:
                arguments = decode_content(part["arguments"])
                parts.append({"type": "text", "content": orjson.dumps(arguments).decode()})
        rewritten.append({**message, "parts": parts})
    return Messages(tuple(rewritten), captured=messages.captured)


def _given_history(messages: Sequence[Message]) -> bool:
    """An answer comes before the last user text: the run went on from a conversation."""
    answered = False
    for message in messages:
        role = message.get("role")
        if role in ("assistant", "model"):
            answered = True
        elif answered and role == "user" and has_text(message):
            return True
    return False


def first_turn_text(messages: Sequence[Message]) -> str | None:
    """The user's request: the last user text before the run's first model response."""
    found: str | None = None
    for message in messages:
        if message.get("role") in ("assistant", "model"):
            break
        if message.get("role") == "user" and has_text(message):
            found = text_of(message)
    return found


def _final_result(value: Any) -> str | None:
    """`final_result` is the output as text, or as a JSON document for structured output."""
    if value is None or is_placeholder(value):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping | list):
        return orjson.dumps(value).decode()
    return str(value)
