"""The values the GenAI conventions' model and run spans hold, as a run is read from them: their
messages (each text read once in a trace), the model that answered, the token counts."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from otel_scorers.conventions.base import Messages
from otel_scorers.conventions.formats.genai_events import event_messages
from otel_scorers.conventions.formats.messages import (
    as_int,
    as_str,
    decode_messages,
)
from otel_scorers.conventions.formats.parsed_texts import ParsedTexts, parsed_so_far
from otel_scorers.conventions.formats.plain_messages import RESPONSE_TEXT, or_plain_text
from otel_scorers.gen_ai_names import (
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_USAGE_COMPLETION_TOKENS,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    GEN_AI_USAGE_PROMPT_TOKENS,
)
from otel_scorers.span_record import SpanRecord

#: The GenAI namespace's own output key, as a vocabulary's `{prefix}output` beside its kind key
#: (`inferred.py`): what a span its reader claims gave, where no messages key holds it.
NAMESPACE_OUTPUT = "gen_ai.output"


def span_messages(span: SpanRecord) -> tuple[Messages, Messages]:
    """Input and output messages: the span's attributes when it has them, else its events."""
    attributes = span.attributes
    raw_input = attributes.get(GEN_AI_INPUT_MESSAGES)
    raw_output = attributes.get(GEN_AI_OUTPUT_MESSAGES) or attributes.get(NAMESPACE_OUTPUT)
    raw_output = raw_output if raw_output is not None else attributes.get(RESPONSE_TEXT)
    if raw_input is None and raw_output is None:
        return event_messages(span)
    parsed = parsed_so_far()
    if parsed is not None and type(raw_input) is str and type(raw_output) is str:
        # Both sides as text, as most model and run spans hold them, read while a trace's runs
        # are: each text read once in the trace (`genai_messages`), in line, without the two
        # calls a side that `or_plain_text` costs; a side that holds no message goes that way.
        found_input = parsed.get(raw_input)
        if found_input is None:
            found_input = parsed[raw_input] = decode_messages(raw_input)
        found_output = parsed.get(raw_output)
        if found_output is None:
            found_output = parsed[raw_output] = decode_messages(raw_output)
        if found_input.items and found_output.items:
            return found_input, found_output
    return or_plain_text(raw_input, "user"), or_plain_text(raw_output, "assistant")


def later_request(span: SpanRecord) -> tuple[str, ParsedTexts, Messages] | None:
    """A model span's request as its text, and its answer read (as `span_messages` reads both),
    when the request is a text its trace has not read yet: a later call's request, the
    conversation so far, read only when its messages are (`later_requests`). None for any other
    span, or outside a trace's reading (`parsed_once`)."""
    attributes = span.attributes
    raw_input = attributes.get(GEN_AI_INPUT_MESSAGES)
    if type(raw_input) is not str:
        return None
    parsed = parsed_so_far()
    if parsed is None or raw_input in parsed:
        return None
    raw_output = attributes.get(GEN_AI_OUTPUT_MESSAGES) or attributes.get(NAMESPACE_OUTPUT)
    raw_output = raw_output if raw_output is not None else attributes.get(RESPONSE_TEXT)
    if type(raw_output) is str:
        found = parsed.get(raw_output)
        if found is None:
            found = parsed[raw_output] = decode_messages(raw_output)
        if found.items:
            return raw_input, parsed, found
    return raw_input, parsed, or_plain_text(raw_output, "assistant")


def answering_model(
    attributes: Mapping[str, Any],
    response: str = GEN_AI_RESPONSE_MODEL,
    request: str = GEN_AI_REQUEST_MODEL,
) -> str | None:
    """The model a model span names: the one that answered (`response`), else the one asked for
    (`request`); the GenAI keys unless the instrumentation has its own."""
    return as_str(attributes.get(response)) or as_str(attributes.get(request))


def input_tokens(attributes: Mapping[str, Any]) -> int | None:
    # `prompt_tokens` / `completion_tokens` are the names before semantic conventions v1.27.
    found = as_int(attributes.get(GEN_AI_USAGE_INPUT_TOKENS))
    return found if found is not None else as_int(attributes.get(GEN_AI_USAGE_PROMPT_TOKENS))


def output_tokens(attributes: Mapping[str, Any]) -> int | None:
    found = as_int(attributes.get(GEN_AI_USAGE_OUTPUT_TOKENS))
    return found if found is not None else as_int(attributes.get(GEN_AI_USAGE_COMPLETION_TOKENS))


def token_count(
    attributes: Mapping[str, Any], key: str, old_key: str, read: Callable[[Mapping[str, Any]], int | None]
) -> int | None:
    """A token count as `read` reads it (`input_tokens`, `output_tokens`), without its calls
    where the span holds an integer under `key` or holds neither key."""
    found = attributes.get(key)
    if type(found) is int:
        return found
    if found is None and old_key not in attributes:
        return None
    return read(attributes)
