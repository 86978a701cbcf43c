"""Decoding attribute values that should hold JSON: JSON text, Python reprs of JSON-like data,
and what did not parse."""

from __future__ import annotations

import ast
from typing import Any

import orjson

from otel_scorers.conventions.formats.bounded_json import too_deep


class Unparsable:
    """Marks an attribute that should have held JSON but did not parse (truncated, say)."""

    __slots__ = ("raw",)

    def __init__(self, raw: str) -> None:
        self.raw = raw


def decode_json(value: Any) -> Any:
    """A JSON string decoded; structured values (and non-JSON strings) returned as they are.

    A dict or list that is not JSON may be a Python repr (frameworks that write `str(result)`,
    as Agno does): it is read as a Python literal, see `python_literal`.
    """
    if isinstance(value, (str, bytes)):
        text = value.strip()
        if text[:1] in ("{", "[", b"{", b"[") or text in ("null", "true", "false") or text[:1] == '"':
            try:
                return orjson.loads(text)
            except orjson.JSONDecodeError:
                return (
                    python_literal(text, value) if isinstance(text, str) and text[:1] in ("{", "[") else value
                )
    return value


#: Longer reprs are left as text: parsing one costs time and memory in proportion to its size
#: (a few microseconds a character), on the scoring worker, for every run it is in.
MAX_LITERAL_CHARS = 16_384


def python_literal(text: str, default: Any) -> Any:
    """A Python repr of JSON-like data (`{'temp_f': 72, 'sunny': True, 'wind': None}`) as that
    data, else `default`. Read with `ast.literal_eval`, which builds literals and runs no
    code; anything it refuses or fails on (syntax, nesting too deep, memory) is not a literal.
    Sets, bytes and complex numbers have no JSON form and are not read either."""
    if len(text) > MAX_LITERAL_CHARS:
        return default
    try:
        literal = ast.literal_eval(text)
        if isinstance(literal, (list, tuple, dict)) and too_deep(text, literal):
            return default
        return _json_like(literal)
    except (Exception, MemoryError, RecursionError):  # bad input stays text, never an error
        return default


def _json_like(value: Any) -> Any:
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_like(item) for item in value]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {key: _json_like(item) for key, item in value.items()}
    raise ValueError("no JSON form")


def decode_json_strict(value: Any) -> Any:
    """Like `decode_json`, but a string that is not JSON becomes `Unparsable`."""
    if isinstance(value, (str, bytes)):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return Unparsable(value if isinstance(value, str) else value.decode(errors="replace"))
    return value
