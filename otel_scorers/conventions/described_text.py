"""The values a described reader read, as a run's parts: text, chat messages, or JSON kept as
its text (`described.DescribedConvention`)."""

from __future__ import annotations

from typing import Any

import orjson

from otel_scorers.conventions.base import RunSpanContent
from otel_scorers.conventions.formats.genai_events import listed_messages
from otel_scorers.conventions.formats.messages import decode_content, is_mapping


def decoded_value(value: Any) -> Any:
    """A text value decoded as JSON when it is JSON (None for a capture-off placeholder)."""
    return decode_content(value) if isinstance(value, str) else value


def scalar_text(value: Any) -> Any:
    """A scalar as text (a numeric conversation id, say); anything else as it is."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def suffixes(spec: str | list[str] | None) -> tuple[str, ...]:
    """A description's `strip_suffix`, as the endings to strip."""
    return () if spec is None else (spec,) if isinstance(spec, str) else tuple(spec)


def without_suffix(value: str, endings: tuple[str, ...]) -> str:
    """The value without the first of `endings` it ends with."""
    for suffix in endings:
        if value.endswith(suffix):
            return value[: -len(suffix)]
    return value


def _is_messages(value: Any) -> bool:
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(is_mapping(item) and ("role" in item or "content" in item) for item in items)


def run_text(content: RunSpanContent, field: str, value: Any, role: str) -> None:
    """A run's input or output: text as it is; chat messages as messages (the last user's or
    assistant's text is read from them); any other value as its JSON."""
    if value is None:
        return
    if isinstance(value, str):
        setattr(content, f"{field}_text", value)
    elif _is_messages(value):
        setattr(content, field, listed_messages(value, role))
    elif is_mapping(value) or isinstance(value, list):
        setattr(content, f"{field}_text", orjson.dumps(value, default=str).decode())
    else:
        setattr(content, f"{field}_text", str(value))
