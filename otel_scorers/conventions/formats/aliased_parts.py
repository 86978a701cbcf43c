"""Tool-call parts that name their fields otherwise: `tool_name` and `tool_call_id` for the
GenAI conventions' `name` and `id` (a `tool_call` part written from a tool-call record's own
field names, as some instrumentations write a Responses API model's calls). Each becomes the
part the conventions write, in place, where the part has no field of the conventions' name.
"""

from __future__ import annotations

from typing import Any

#: The field that names the tool in such a part: a part without it is none (one lookup).
ALIAS = "tool_name"
_ALIASES = (("tool_name", "name"), ("tool_call_id", "id"))


def name_aliased_call(part: dict[str, Any]) -> None:
    """Give a `tool_call` part that names its tool `tool_name` (its id `tool_call_id`) the
    conventions' `name` (and `id`)."""
    if part.get("type") != "tool_call":
        return
    for alias, key in _ALIASES:
        if key not in part and alias in part:
            part[key] = part[alias]
