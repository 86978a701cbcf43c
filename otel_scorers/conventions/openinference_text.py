"""What an OpenInference span says in text: a run's input and output, a tool call's arguments,
and the flattened `llm.input_messages.N.message.*` attributes read as messages."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions import ag2, autogen
from otel_scorers.conventions.base import (
    Message,
    Messages,
)
from otel_scorers.conventions.formats import ag2 as ag2_objects
from otel_scorers.conventions.formats import crewai, haystack, langchain, llamaindex
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import genai_messages, last_assistant_text, last_user_text
from otel_scorers.conventions.frameworks import framework_of, step_fields
from otel_scorers.conventions.openinference_frameworks import beeai_span, dspy_span, haystack_span
from otel_scorers.conventions.openinference_scopes import (
    AUTOGEN,
    BEEAI,
    CREWAI,
    DSPY,
    HAYSTACK,
    LANGCHAIN,
    LLAMA_INDEX,
    OPENAI_AGENTS,
    REDACTED,
    SMOLAGENTS,
)
from otel_scorers.span_record import SpanRecord

_MESSAGE_KEY = re.compile(r"(\d+)\.message\.(.+)")


#: AutoGen AgentChat's instrumentation flattens a tool-results message as `{i}.function.{k}`.
_FUNCTION_RESULT_KEY = re.compile(r"(\d+)\.(function\.\d+)")


def content_value(value: Any) -> Any:
    """An input/output value, None when content capture hid it."""
    if value is None or (isinstance(value, str) and value in REDACTED):
        return None
    return value


def run_input(span: SpanRecord) -> str | None:
    crewai_run = crewai_span(span)
    if crewai_run and (task := _crewai_input(span)) is not None:
        return task
    value = content_value(span.attributes.get("input.value"))
    if value is None:
        return None
    if haystack_span(span):
        return last_user_text(haystack.component_messages(value, "messages").items)
    if dspy_span(span) and isinstance(arguments := decode_json(value), Mapping) and "input_args" in arguments:
        return _only_text(arguments["input_args"])
    decoded = decode_json(value)
    if isinstance(decoded, str):
        return decoded
    if isinstance(decoded, Mapping):
        # smolagents' run(task=...), AG2's initiate_chat(message=...) and the like
        for key in ("task", "input", "question", "query", "message"):
            if isinstance(decoded.get(key), str):
                return str(decoded[key])
        messages = langchain.messages_of(decoded)
        if messages:
            return last_user_text(messages)
    # Any other structure (a call recorded as its arguments, smolagents' instrumentation before
    # 0.1.4x: run(task)) as it was recorded: the run's reading reduces it (`runs/run_text`).
    # A CrewAI task's holds its agent, not the request (`_crewai_input`).
    if crewai_run or not isinstance(value, str) or not isinstance(decoded, (Mapping, list)):
        return None
    return value


#: Its scopes of other frameworks: their spans are theirs, not LlamaIndex's, whatever their names.
_OTHER_FRAMEWORKS = frozenset(
    {
        *CREWAI,
        OPENAI_AGENTS,
        SMOLAGENTS,
        AUTOGEN,
        LANGCHAIN,
        HAYSTACK,
        BEEAI,
        DSPY,
        ag2.SCOPE,
    }
)


def llama_index_span(span: SpanRecord) -> bool:
    """A LlamaIndex agent's or tool's span: by its scope, or by its name under a scope that names
    no other framework (one not shown too)."""
    scope = span.scope
    return scope == LLAMA_INDEX or (scope not in _OTHER_FRAMEWORKS and llamaindex.names_its_class(span.name))


def crewai_span(span: SpanRecord) -> bool:
    """A CrewAI agent's span: by its scope, or by CrewAI's own keys under any other."""
    return span.scope in CREWAI or crewai.written_by_crewai(span.attributes)


def _crewai_input(span: SpanRecord) -> str | None:
    """A task span's input holds the agent (or, from the event bus, the whole task prompt), not
    the task: the task description is in the TaskOutput it returned, or in `task_description`.
    A kickoff's input holds the messages it was given."""
    if content_value(span.attributes.get("input.value")) is None and "input.value" in span.attributes:
        return None  # inputs hidden (TraceConfig): `task_description` is written regardless
    if isinstance(span.attributes.get("task_description"), str):
        return str(span.attributes["task_description"])
    task = crewai.output_field(decode_json(content_value(span.attributes.get("output.value"))), "description")
    if task is not None:
        return task
    kickoff = decode_json(content_value(span.attributes.get("input.value")))
    messages = kickoff.get("messages") if isinstance(kickoff, Mapping) else None
    if isinstance(messages, str):
        return messages
    if isinstance(messages, list):
        return last_user_text(genai_messages(messages).items)  # [{role, content}, ...]
    return None


def run_output(span: SpanRecord) -> str | None:
    value = content_value(span.attributes.get("output.value"))
    if value is None:
        return None
    if haystack_span(span):
        last = haystack.last_message(value)
        return last_assistant_text([last]) if last is not None else None
    if dspy_span(span) and isinstance(prediction := decode_json(value), Mapping):
        return _only_text(
            {key: item for key, item in prediction.items() if key not in step_fields(framework_of(span))}
        )
    decoded = decode_json(value)
    if crewai_span(span) and (answer := crewai.output_field(decoded, "raw")) is not None:
        return answer  # TaskOutput / LiteAgentOutput
    if isinstance(decoded, str):
        return decoded
    if (
        isinstance(decoded, Mapping)
        and decoded.get("role") == "assistant"
        and isinstance(decoded.get("text"), str)
    ):
        return str(decoded["text"])  # an agent's answer message, its text one field (BeeAI's for TypeScript)
    messages = langchain.messages_of(decoded)
    if messages:
        # The final state's last AI message, even when it is empty: that is what the run answered.
        for message in reversed(messages):
            if message.get("role") == "assistant":
                return "".join(part["content"] for part in message["parts"] if part.get("type") == "text")
    return None


def _only_text(fields: Any) -> str | None:
    """The one text field of a DSPy signature's inputs or outputs (`question -> answer`); None
    when there are several, which no one of them answers alone."""
    if not isinstance(fields, Mapping) or len(fields) != 1:
        return None
    (value,) = fields.values()
    return value if isinstance(value, str) else None


def tool_arguments(span: SpanRecord, value: Any) -> Any:
    value = content_value(value)
    if value is None:
        return None
    decoded = decode_json(value)
    if llama_index_span(span):
        return llamaindex.kwargs_of(decoded)
    if (
        span.scope in (SMOLAGENTS, DSPY)
        and isinstance(decoded, Mapping)
        and isinstance(decoded.get("kwargs"), Mapping)
        and not decoded.get("args")
    ):
        return dict(decoded["kwargs"])  # recorded as {"args", "kwargs", ...} / {"kwargs"}
    if beeai_span(span) and isinstance(decoded, Mapping) and set(decoded) <= {"input", "options"}:
        return decoded.get("input")  # BeeAI records a tool's run(input, options)
    if span.scope == ag2.SCOPE:  # read here too, so that the call is built once (`formats/ag2`)
        return ag2_objects.tool_arguments(decoded, span.attributes.get("tool.name") or span.name)
    return decoded


def flattened_messages(attributes: Mapping[str, Any], prefix: str) -> Messages:
    """`llm.input_messages.{i}.message.*` keys as GenAI-shaped messages."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        match = _MESSAGE_KEY.fullmatch(key, len(prefix)) or _FUNCTION_RESULT_KEY.fullmatch(key, len(prefix))
        if match is None:
            continue
        found.setdefault(int(match.group(1)), {})[match.group(2)] = value
    if not found:
        return Messages()
    return Messages(tuple(_message(found[index]) for index in sorted(found)), captured=True)


def _indexed(fields: Mapping[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """Sub-lists (`contents.{j}.*`, `tool_calls.{k}.*`) in index order, whatever the first index."""
    items: dict[int, dict[str, Any]] = {}
    for key, value in fields.items():
        if key.startswith(prefix):
            index, _, rest = key[len(prefix) :].partition(".")
            if index.isdigit():
                items.setdefault(int(index), {})[rest] = value
    return dict(sorted(items.items()))


def _message(fields: Mapping[str, Any]) -> Message:
    role = str(fields.get("role") or "")
    text = fields.get("content")
    if not isinstance(text, str):
        texts = [
            item.get("message_content.text")
            for item in _indexed(fields, "contents.").values()
            if item.get("message_content.type", "text") == "text"
        ]
        text = "".join(t for t in texts if isinstance(t, str)) if texts else None
    parts: list[dict[str, Any]] = []
    if role == "tool":
        parts.append({"type": "tool_call_response", "id": fields.get("tool_call_id"), "response": text})
    elif role == "function":
        parts.extend(autogen.function_results(_indexed(fields, "function.")))
    elif text is not None:
        parts.append({"type": "text", "content": text})
    for call in _indexed(fields, "tool_calls.").values():
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("tool_call.id"),
                "name": call.get("tool_call.function.name"),
                "arguments": call.get("tool_call.function.arguments", {}),
            }
        )
    message: dict[str, Any] = {"role": role, "parts": parts}
    if isinstance(fields.get("name"), str):
        message["name"] = fields["name"]
    return message


def responses_output(value: Any) -> Messages:
    """A model span without flattened output messages (OpenAI Agents streaming) may still hold
    the Responses API's `output` items in `output.value`."""
    decoded = decode_json(content_value(value))
    responses = decoded if isinstance(decoded, list) else [decoded]
    parts: list[dict[str, Any]] = []
    for response in responses:
        if not isinstance(response, Mapping) or not isinstance(response.get("output"), list):
            continue
        for item in response["output"]:
            if not isinstance(item, Mapping):
                continue
            if item.get("type") == "function_call":
                parts.append(
                    {
                        "type": "tool_call",
                        "id": item.get("call_id"),
                        "name": item.get("name"),
                        "arguments": item.get("arguments"),
                    }
                )
            elif item.get("type") == "message":
                for block in item.get("content") or ():
                    if isinstance(block, Mapping) and block.get("type") == "output_text":
                        parts.append({"type": "text", "content": block.get("text")})
    if not parts:
        return Messages()
    return Messages(({"role": "assistant", "parts": parts},), captured=True)
