"""Tool-call parts that name their fields otherwise: `tool_name` and `tool_call_id` for the
GenAI conventions' `name` and `id` (a `tool_call` part written from a tool-call record's own
field names, as some instrumentations write a Responses API model's calls). Each becomes the
part the conventions write, in place, where the part has no field of the conventions' name.
"""

from __future__ import annotations

from collections.abc import Sequence

from otel_scorers.conventions.base import Message

#: What a messages attribute's JSON text holds when a part may name its tool so: asked first, in C.
MARK = '"tool_name"'
_ALIASES = (("tool_name", "name"), ("tool_call_id", "id"))


def name_aliased_calls(messages: Sequence[Message]) -> None:
    """Give each `tool_call` part that names its tool `tool_name` (its id `tool_call_id`) the
    conventions' `name` (and `id`)."""
    for message in messages:
        for part in message.get("parts", ()):
            if part.get("type") != "tool_call" or not isinstance(part, dict):
                continue
            for alias, key in _ALIASES:
                if key not in part and alias in part:
                    part[key] = part[alias]
