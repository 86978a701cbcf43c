"""Where an inferred vocabulary's model call keeps its messages (`inferred.py`): under its kind
key's prefix, else in the GenAI conventions' message keys (`gen_ai.input.messages`,
`gen_ai.output.messages`), which a tracer of its own vocabulary may write its model calls'
messages in though no reader of the GenAI conventions claims its spans."""

from __future__ import annotations

from typing import Any

from otel_scorers.gen_ai_names import GEN_AI_INPUT_MESSAGES, GEN_AI_OUTPUT_MESSAGES

#: Where a model call's messages are under a well-known key (an OpenAI response's first choice).
_MESSAGE_PATHS: dict[str, tuple[str, ...]] = {
    "input": ("messages",),
    "output": ("choices[0].message", "message", "messages"),
}


def message_sources(attribute: str | None, side: str) -> list[Any] | None:
    """The sources of a model call's messages on `side` in `attribute`: under a well-known key of
    its value, else the value itself; None without an attribute."""
    if attribute is None:
        return None
    return [*({"attribute": attribute, "path": path} for path in _MESSAGE_PATHS[side]), attribute]


#: The GenAI conventions' keys of a model call's messages, by side.
_GENAI_MESSAGES: dict[str, str] = {"input": GEN_AI_INPUT_MESSAGES, "output": GEN_AI_OUTPUT_MESSAGES}


def genai_message_source(keys: frozenset[str], side: str) -> list[Any] | None:
    """The GenAI conventions' key of the side's messages, when the model spans carry it."""
    key = _GENAI_MESSAGES[side]
    return [key] if key in keys else None
