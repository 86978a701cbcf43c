"""AG2 0.x (`autogen`'s ConversableAgent) under OpenInference's `openinference-instrumentation-ag2`.

A chat is `{sender}.initiate_chat` (AGENT; `ag2.recipient.name`, input.value JSON
`{message, sender, recipient}`, output.value the last message) over one `{agent}.generate_reply`
AGENT span per turn, the tools the executing agent runs under its turn as TOOL spans (input.value
`{arguments: "<JSON>", name}`, `tool_call.id`, output.value AG2's `[success, {name, role,
content}]`). The chat is the run, named after the agent it was started with; its turns are not
runs of their own: each agent's replies, tool calls included, make up the one conversation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions.formats.messages import as_str, decode_json
from otel_scorers.span_record import SpanRecord

SCOPE = "openinference.instrumentation.ag2"
_TURN_SUFFIX = ".generate_reply"


def is_turn(span: SpanRecord) -> bool:
    """A `{agent}.generate_reply` span: one turn of a chat, not a run."""
    return span.name.endswith(_TURN_SUFFIX)


def chat_agent(span: SpanRecord) -> str | None:
    """The agent a chat was started with (`ag2.recipient.name`), None for other spans."""
    return as_str(span.attributes.get("ag2.recipient.name"))


def tool_arguments(decoded: Any) -> Any:
    """`{arguments: "<JSON>", name}` -> the arguments the model gave."""
    if isinstance(decoded, Mapping) and "arguments" in decoded and "name" in decoded:
        return decode_json(decoded["arguments"])
    return decoded


def tool_result(decoded: Any) -> tuple[Any, bool | None]:
    """AG2's `[success, {name, role, content}]` -> (the content, success); anything else as is."""
    if (
        isinstance(decoded, list)
        and len(decoded) == 2
        and isinstance(decoded[0], bool)
        and isinstance(decoded[1], Mapping)
        and "content" in decoded[1]
    ):
        return decode_json(decoded[1]["content"]), decoded[0]
    return decoded, None
