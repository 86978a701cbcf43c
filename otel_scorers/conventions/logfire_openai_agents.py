"""Logfire's instrumentation of the OpenAI Agents SDK (scope `logfire.openai_agents`).

Span names are Logfire message templates: `Agent run: {name!r}` (the agent in `name`),
`Function: {name}` (arguments in `input`, result in `output`), `Chat completion with ...` (the
request's messages in `input`, the answer in `output`), `Responses API with ...` (the SDK's
default model: the request's items and then the reply's as one `events` list, see
`_responses_messages`) and `Handoff: {from_agent} → {to_agent}`, an agent transition, not a tool
call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions.base import Convention, Markers, Messages, ModelCall, RunSpanContent, SpanRole
from otel_scorers.conventions.formats.genai_events import event_list_messages, listed_messages
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import (
    as_int,
    as_str,
    handoff_tool_name,
    span_tool_call,
    tool_state,
)
from otel_scorers.conventions.genai import answering_model
from otel_scorers.gen_ai_names import (
    GEN_AI_ASSISTANT_MESSAGE,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
)
from otel_scorers.model import ToolCall
from otel_scorers.span_record import SpanRecord

SCOPE = "logfire.openai_agents"
_RUN = "Agent run:"
_TOOL = "Function:"
_HANDOFF = "Handoff:"
_MODEL = ("Chat completion with", "Responses API with")
#: The root of each Runner.run: every agent of it, handoffs included, runs inside it.
_TRACE = "OpenAI Agents trace:"
#: The span names (message templates) of its spans the reader uses, as written.
_TEMPLATES = frozenset(
    {
        "OpenAI Agents trace: {name}",
        "Agent run: {name!r}",
        "Function: {name}",
        "Handoff: {from_agent} → {to_agent}",
        "Chat completion with {gen_ai.request.model!r}",
        "Responses API with {gen_ai.request.model!r}",
    }
)
#: A Responses API span's messages: GenAI events (v1.28 form) as one JSON list.
_EVENTS = "events"
_ASSISTANT_EVENT = GEN_AI_ASSISTANT_MESSAGE


class LogfireOpenAIAgentsConvention(Convention):
    name = "logfire_openai_agents"
    run_start_names: tuple[str, ...] = (_RUN, _TRACE)
    run_start_markers: tuple[tuple[str, str | None], ...] = ()

    markers = Markers(scopes=frozenset({SCOPE}), names=_TEMPLATES)

    def detect(self, span: SpanRecord) -> bool:
        # Logfire names a span by its message template, which its scope may not say (a scope
        # renamed, another Logfire integration of the SDK): the templates alone mark its spans.
        return span.scope == SCOPE or span.name in _TEMPLATES

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
        if "input" in attributes or "output" in attributes or _EVENTS not in attributes:
            request = listed_messages(attributes.get("input"), "user")
            answer = listed_messages(attributes.get("output"), "assistant")
        else:
            request, answer = _responses_messages(attributes[_EVENTS])
        return ModelCall(
            span_id=span.span_id,
            start_ns=span.start_ns,
            input=request,
            output=answer,
            model=answering_model(attributes),
            input_tokens=as_int(attributes.get(GEN_AI_USAGE_INPUT_TOKENS)),
            output_tokens=as_int(attributes.get(GEN_AI_USAGE_OUTPUT_TOKENS)),
        )

    def internal_tool(self, span: SpanRecord) -> bool:
        return span.name.startswith(_HANDOFF)

    def handoff_target(self, span: SpanRecord) -> str | None:
        return as_str(span.attributes.get("to_agent")) if span.name.startswith(_HANDOFF) else None


def _responses_messages(value: Any) -> tuple[Messages, Messages]:
    """(request, reply) of a Responses API span's `events`: Logfire lists the request's items,
    then one assistant event per item of the reply. The reply is the trailing assistant events
    (a request ends with the user's message or a tool's output, never with the model's)."""
    events = decode_json(value)
    if not isinstance(events, list):
        return event_list_messages(value)
    start = len(events)
    while start > 0:
        event = events[start - 1]
        if not isinstance(event, Mapping) or event.get("event.name") != _ASSISTANT_EVENT:
            break
        start -= 1
    request, _ = event_list_messages(events[:start])
    # An assistant event is read as a message of the request: here it is the reply's.
    reply, _ = event_list_messages(events[start:])
    return request, reply
