"""Where an inferred vocabulary's model call keeps its messages (`inferred.py`)."""

from __future__ import annotations

from typing import Any

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
