"""LiteLLM's own OpenTelemetry callback (`litellm.callbacks = ["otel"]`, scope `litellm`).

LiteLLM writes each call it makes one of two ways. With USE_OTEL_LITELLM_REQUEST_SPAN=true, or
with no span active, as a `litellm_request` span of its own (GenAI attributes: a model call).
In its default mode, with a span active, onto that span: the caller's own span (the
`invoke_agent` span of a hand-written agent) gets the call's attributes, its
`gen_ai.operation.name` becoming `chat`, each call overwriting the one before, and the last
call's, which LiteLLM's logging worker writes after the call returned, is dropped when the
caller's span has ended by then. Such a span is what its own name says it is (`invoke_agent
{agent}`, `execute_tool {tool}`), and the call attributes on it are one call's, not its own.

With message logging on (LiteLLM's default), each call also writes a `raw_gen_ai_request` span
under the span it belongs to: the provider's request (`llm.{provider}.messages`) and reply
(`llm.{provider}.choices`, or Anthropic's `content`) as Python reprs, the reply's `model` and
`usage`. It is the one complete record of every call in the default mode, so it is the model
call there; inside a `litellm_request` span it is that call again, seen by a lower layer.

Both kinds of span are written by LiteLLM's logging worker after the call returned: the last
call's may come after the run span ended, too late for a run read when its span ends
(`Convention.written_after_return`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions.base import (
    NOT_CAPTURED,
    Convention,
    Messages,
    ModelCall,
    RunSpanContent,
    SpanRole,
)
from otel_scorers.conventions.formats.genai_events import listed_messages
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import as_int, as_str, last_assistant_text, tool_call_parts
from otel_scorers.conventions.genai import model_call as genai_model_call
from otel_scorers.conventions.genai import name_suffix, span_messages
from otel_scorers.conventions.genai import tool_call as genai_tool_call
from otel_scorers.gen_ai_names import GEN_AI_AGENT_NAME, GEN_AI_CONVERSATION_ID, GEN_AI_TOOL_NAME
from otel_scorers.model import ToolCall
from otel_scorers.span_record import SpanRecord

SCOPE = "litellm"
#: Written with every call's attributes: on a caller's span, it says LiteLLM wrote onto it.
CALL_ID = "litellm.call_id"
REQUEST_SPAN = "litellm_request"
RAW_SPAN = "raw_gen_ai_request"
_CALL_SPANS = (REQUEST_SPAN, RAW_SPAN)
_RUN_PREFIX = "invoke_agent"
_TOOL_PREFIX = "execute_tool"


class LiteLLMConvention(Convention):
    name = "litellm"
    # The caller's `invoke_agent` span starts as a GenAI run span: GenAI's markers spot it.
    run_start_names: tuple[str, ...] = ()
    run_start_markers: tuple[tuple[str, str | None], ...] = ()

    def detect(self, span: SpanRecord) -> bool:
        return span.scope == SCOPE or CALL_ID in span.attributes or span.name == RAW_SPAN

    def role(self, span: SpanRecord) -> SpanRole | None:
        # LiteLLM's own spans are known by their names (the request span also by its call id),
        # under its scope or any other (a tracer renamed, or a new version's).
        if span.name in _CALL_SPANS:
            return "model"
        if span.scope == SCOPE:
            return None
        # A caller's span LiteLLM wrote a call onto: its name and its own GenAI keys (LiteLLM
        # writes neither an agent's nor a tool's) still say what it was.
        attributes = span.attributes
        if span.name.startswith(_RUN_PREFIX) or GEN_AI_AGENT_NAME in attributes:
            return "run"
        if span.name.startswith(_TOOL_PREFIX) or GEN_AI_TOOL_NAME in attributes:
            return "tool"
        return None

    def run_content(self, span: SpanRecord) -> RunSpanContent:
        """The caller's run span: its own agent and conversation. Its model and tokens are one
        call's, written by LiteLLM: the run's come from its model calls. So are its messages,
        but they are all the trace holds when LiteLLM writes no raw spans (with the GenAI
        semantic conventions opted in): the call's input holds the user's request, and its
        output is the run's answer when it is one (text, no tool call: the loop's last call,
        which ended the loop)."""
        attributes = span.attributes
        request, reply = span_messages(span)
        answer = (
            reply if last_assistant_text(reply.items) and not tool_call_parts(reply.items) else NOT_CAPTURED
        )
        return RunSpanContent(
            agent_name=as_str(attributes.get(GEN_AI_AGENT_NAME)) or name_suffix(span.name, _RUN_PREFIX),
            input=request,
            output=answer,
            conversation_id=as_str(attributes.get(GEN_AI_CONVERSATION_ID)),
        )

    def tool_call(self, span: SpanRecord) -> ToolCall:
        return genai_tool_call(span)

    def written_after_return(self, span: SpanRecord) -> bool:
        return span.scope == SCOPE or CALL_ID in span.attributes or span.name == RAW_SPAN

    def model_call(self, span: SpanRecord) -> ModelCall:
        if span.name != RAW_SPAN:
            call = genai_model_call(span)
            calls = _function_calls(span.attributes)
            if calls and not tool_call_parts(call.output.items):
                call.output = Messages(({"role": "assistant", "parts": calls},), captured=True)
            return call
        request, reply, usage, model = _raw_payload(span.attributes)
        return ModelCall(
            span_id=span.span_id,
            start_ns=span.start_ns,
            input=_chat_messages(request, "user"),
            output=_reply_messages(reply),
            model=as_str(model),
            input_tokens=_usage(usage, "prompt_tokens", "input_tokens"),
            output_tokens=_usage(usage, "completion_tokens", "output_tokens"),
        )


#: `gen_ai.completion.{i}.function_call.name|arguments`: a call span's tool calls, which its
#: `gen_ai.output.messages` leaves out (an assistant message with no parts). Past this many, not read.
_MAX_FUNCTION_CALLS = 128


def _function_calls(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    found = []
    for index in range(_MAX_FUNCTION_CALLS):
        name = attributes.get(f"gen_ai.completion.{index}.function_call.name")
        if name is None:
            break
        arguments = decode_json(attributes.get(f"gen_ai.completion.{index}.function_call.arguments"))
        found.append({"type": "tool_call", "id": None, "name": as_str(name), "arguments": arguments})
    return found


def _raw_payload(attributes: Mapping[str, Any]) -> tuple[Any, Any, Any, Any]:
    """(messages, reply, usage, model) of a raw request span: keys `llm.{provider}.{field}`, the
    provider being LiteLLM's name for it (`openai`, `anthropic`, ...)."""
    provider = None
    for key in attributes:
        if key.startswith("llm.") and key.endswith(".messages"):
            provider = key[: -len("messages")]
            break
    if provider is None:
        return None, None, None, None
    reply = attributes.get(provider + "choices")
    if reply is None:
        reply = attributes.get(provider + "content")  # Anthropic's reply: content blocks
    return (
        attributes.get(provider + "messages"),
        reply,
        attributes.get(provider + "usage"),
        attributes.get(provider + "model"),
    )


def _chat_messages(value: Any, default_role: str) -> Messages:
    """Chat messages written as a Python repr (or JSON); a repr too long to be read is not
    captured content (`python_literal`), never a message of its own."""
    decoded = decode_json(value)
    if not isinstance(decoded, list):
        return NOT_CAPTURED
    return listed_messages(decoded, default_role)


def _reply_messages(value: Any) -> Messages:
    """A chat completion's `choices` (each its `message`), or Anthropic's content blocks."""
    decoded = decode_json(value)
    if not isinstance(decoded, list):
        return NOT_CAPTURED
    if decoded and all(isinstance(choice, Mapping) and "message" in choice for choice in decoded):
        return listed_messages([choice["message"] for choice in decoded], "assistant")
    return listed_messages([{"role": "assistant", "content": decoded}], "assistant")


def _usage(value: Any, *keys: str) -> int | None:
    usage = decode_json(value)
    if not isinstance(usage, Mapping):
        return None
    for key in keys:
        found = as_int(usage.get(key))
        if found is not None:
            return found
    return None
