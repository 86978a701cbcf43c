"""Google ADK (scope `gcp.vertex.agent`), telemetry schema v2 and the legacy v1.

v2 writes GenAI attributes: `invoke_workflow` > `invoke_agent {name}` > `generate_content
{model}` / `execute_tool {tool}`. The legacy schema puts content on `call_llm` spans
(`gcp.vertex.agent.llm_request` / `llm_response`, Gemini `contents`) and on tool spans
(`gcp.vertex.agent.tool_call_args` / `tool_response`); the `generate_content` span under a
`call_llm` repeats the call without content and is left to the run builder's rule for nested
model spans. In both, ADK wraps a tool's non-dict return value as `{"result": value}` and its
call ids do not match the model's (`adk-<uuid>` against `<tool>_<n>`, or none): calls are
matched by order and name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from otel_scorers.conventions import genai
from otel_scorers.conventions.base import (
    NOT_CAPTURED,
    UNNAMED_AGENT,
    Convention,
    Messages,
    ModelCall,
    SpanRole,
)
from otel_scorers.conventions.formats.messages import (
    decode_content,
    handoff_agent,
    span_tool_call,
    text_of,
)
from otel_scorers.conventions.genai import answering_model, input_tokens, output_tokens
from otel_scorers.gen_ai_names import GEN_AI_TOOL_NAME, GEN_AI_TOOL_TYPE
from otel_scorers.model import ToolCall
from otel_scorers.span_record import SpanRecord

SCOPE = "gcp.vertex.agent"
LLM_REQUEST = "gcp.vertex.agent.llm_request"
LLM_RESPONSE = "gcp.vertex.agent.llm_response"
TOOL_ARGS = "gcp.vertex.agent.tool_call_args"
TOOL_RESPONSE = "gcp.vertex.agent.tool_response"
_CALL_LLM = "call_llm"
#: Keys ADK writes on its model and tool spans (the event's, the invocation's, the legacy
#: schema's content): by them its spans are ADK's whichever scope wrote them.
ADK_KEYS = frozenset({"gcp.vertex.agent.event_id", "gcp.vertex.agent.invocation_id", LLM_REQUEST, TOOL_ARGS})
#: ADK's stand-in for a value it does not have (a failed call's id and result).
NOT_SPECIFIED = "<not specified>"
TRANSFER, TRANSFER_TYPE = "transfer_to_agent", "TransferToAgentTool"
_CONTEXT_PREFIX = "For context:"
#: The role given to other agents' turns that ADK presents to an agent as user messages.
OTHER_AGENTS_ROLE = "other_agents"


def written_by_adk(span: SpanRecord) -> bool:
    """The span carries a key only ADK writes (`ADK_KEYS`)."""
    # The view against the set: the four keys are looked up, not the span's many.
    return not span.attributes.keys().isdisjoint(ADK_KEYS)


class GoogleADKConvention(Convention):
    name = "google_adk"
    # An invocation's agents run one after another inside it when one transfers to another:
    # the trace stays open until the invocation (`invoke_workflow`, legacy `invocation`) ends.
    run_start_names: tuple[str, ...] = ("invoke_agent", "invoke_workflow", "invocation")
    run_start_markers: tuple[tuple[str, str | None], ...] = ()

    def detect(self, span: SpanRecord) -> bool:
        # Its run spans carry GenAI's keys only, read alike by the GenAI reader under any scope.
        return span.scope == SCOPE or written_by_adk(span)

    def role(self, span: SpanRecord) -> SpanRole | None:
        # Runs, tools and model calls (legacy `call_llm` too): this reading has no documents for
        # a GenAI retrieval span.
        role = genai.operation_role(span)
        if role is not None and role != "retriever":
            return role
        return "model" if span.name == _CALL_LLM else None

    run_content = staticmethod(genai.run_content)

    def internal_tool(self, span: SpanRecord) -> bool:
        """`transfer_to_agent` hands the conversation to another agent: a handoff, not a call."""
        attributes = span.attributes
        return (
            attributes.get(GEN_AI_TOOL_NAME) == TRANSFER or attributes.get(GEN_AI_TOOL_TYPE) == TRANSFER_TYPE
        )

    def handoff_target(self, span: SpanRecord) -> str | None:
        """The agent `transfer_to_agent` hands the conversation to; without content, whichever
        agent runs next in the invocation (`UNNAMED_AGENT`): a transfer always hands on."""
        if not self.internal_tool(span):
            return None
        return handoff_agent(self.tool_call(span).arguments) or UNNAMED_AGENT

    def model_call(self, span: SpanRecord) -> ModelCall:
        attributes = span.attributes
        if LLM_REQUEST not in attributes and LLM_RESPONSE not in attributes:
            call = genai.model_call(span)
            return replace(call, input=_other_agents_apart(call.input))
        return ModelCall(
            span_id=span.span_id,
            start_ns=span.start_ns,
            input=_other_agents_apart(_request_messages(attributes.get(LLM_REQUEST))),
            output=_response_messages(attributes.get(LLM_RESPONSE)),
            model=answering_model(attributes),
            input_tokens=input_tokens(attributes),
            output_tokens=output_tokens(attributes),
        )

    def tool_call(self, span: SpanRecord) -> ToolCall:
        attributes = span.attributes
        call = genai.tool_call(span)
        arguments, result = call.arguments, call.result
        legacy_arguments, legacy_result = attributes.get(TOOL_ARGS), attributes.get(TOOL_RESPONSE)
        # With content capture off the legacy schema writes "{}" for both; a real response is
        # never empty (ADK wraps even None as {"result": null}).
        if not (_is_empty(legacy_arguments) and _is_empty(legacy_result)):
            if arguments is None:
                arguments = decode_content(legacy_arguments)
            if result is None:
                result = decode_content(legacy_result)
        call_id = call.call_id if call.call_id != NOT_SPECIFIED else None
        return span_tool_call(
            span, name=call.name, call_id=call_id, arguments=arguments, result=unwrap_result(result)
        )


def _other_agents_apart(messages: Messages) -> Messages:
    """ADK shows an agent what other agents said and did (before a transfer, say) as `user`
    messages starting "For context:". They are not the user's request: they get their own role
    so that the request is still found as the last user message."""
    if not messages.captured:
        return messages
    items = tuple(
        {**message, "role": OTHER_AGENTS_ROLE}
        if message.get("role") == "user" and text_of(message).startswith(_CONTEXT_PREFIX)
        else message
        for message in messages.items
    )
    return Messages(items, captured=True)


def unwrap_result(result: Any) -> Any:
    """ADK sends a tool's non-dict return value to the model as {"result": value}."""
    if isinstance(result, Mapping) and len(result) == 1 and "result" in result:
        value = result["result"]
        return None if value == NOT_SPECIFIED else value
    return result


def _is_empty(value: Any) -> bool:
    return bool(decode_content(value) == {})


def _request_messages(value: Any) -> Messages:
    request = decode_content(value)
    if not isinstance(request, Mapping) or not isinstance(request.get("contents"), list):
        return NOT_CAPTURED
    messages = tuple(_message(content) for content in request["contents"] if isinstance(content, Mapping))
    return Messages(messages, captured=True)


def _response_messages(value: Any) -> Messages:
    response = decode_content(value)
    if not isinstance(response, Mapping) or not isinstance(response.get("content"), Mapping):
        return NOT_CAPTURED
    return Messages((_message(response["content"]),), captured=True)


def _message(content: Mapping[str, Any]) -> dict[str, Any]:
    """A Gemini `Content` ({role: user|model, parts: [text | function_call | function_response]})."""
    role = content.get("role")
    parts = content.get("parts")
    return {
        "role": "assistant" if role == "model" else str(role or "user"),
        "parts": [part for raw in parts if (part := _part(raw)) is not None]
        if isinstance(parts, list)
        else [],
    }


def _part(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, Mapping):
        return None
    if isinstance(raw.get("text"), str):
        return {"type": "reasoning" if raw.get("thought") else "text", "content": raw["text"]}
    call = raw.get("function_call")
    if isinstance(call, Mapping):
        return {
            "type": "tool_call",
            "id": call.get("id"),
            "name": call.get("name"),
            "arguments": call.get("args"),
        }
    response = raw.get("function_response")
    if isinstance(response, Mapping):
        return {
            "type": "tool_call_response",
            "id": response.get("id"),
            "name": response.get("name"),
            "response": response.get("response"),
        }
    return None
