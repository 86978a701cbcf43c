"""Reading one JSON object of the expected shape out of a judge's reply (code fences and text
around it tolerated)."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from pydantic import TypeAdapter, ValidationError

_MAX_JSON_CANDIDATES = 64
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class JudgeParseError(ValueError):
    """The reply held no JSON object of the expected shape; the message says what was wrong."""


def json_objects(text: str) -> list[Any]:
    """The JSON objects in a reply, best candidates first: fenced blocks, the whole text, then
    each `{...}` that decodes, left to right (bounded, so a hostile reply costs little)."""
    found: list[Any] = []
    decoder = json.JSONDecoder()
    for candidate in [*_FENCE.findall(text), text]:
        candidate = candidate.strip()
        try:
            found.append(json.loads(candidate))
            continue
        except ValueError:
            pass
        position, attempts = candidate.find("{"), 0
        while position != -1 and attempts < _MAX_JSON_CANDIDATES:
            attempts += 1
            try:
                value, end = decoder.raw_decode(candidate, position)
            except ValueError:
                position = candidate.find("{", position + 1)
                continue
            found.append(value)
            position = candidate.find("{", end)
    return [value for value in found if isinstance(value, dict)]


@functools.lru_cache(maxsize=64)
def _adapter(shape: Any) -> TypeAdapter[Any]:
    return TypeAdapter(shape)


def parse_reply(text: str, shape: Any) -> Any:
    """The first JSON object in `text` that validates as `shape` (a pydantic model, TypedDict,
    dataclass or `dict[str, Any]`). `JudgeParseError` says why none did."""
    adapter = _adapter(shape)
    objects = json_objects(text)
    if not objects:
        raise JudgeParseError("the reply contains no JSON object")
    first_error: ValidationError | None = None
    for value in objects:
        try:
            return adapter.validate_python(value)
        except ValidationError as exc:
            first_error = first_error or exc
    assert first_error is not None
    problems = "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'reply'}: {error['msg']}"
        for error in first_error.errors()[:3]
    )
    raise JudgeParseError(f"the JSON object does not have the expected shape ({problems})")


def conforms(value: Any, shape: Any) -> Any | None:
    """`value` validated as `shape`, or None when it is not of that shape."""
    if value is None:
        return None
    try:
        return _adapter(shape).validate_python(value)
    except ValidationError:
        return None
