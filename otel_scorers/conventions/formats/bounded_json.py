"""Decoding within a depth the values read whole by recursive code (a run's `metadata`, Python
reprs): deeper documents stay text. Messages and tool values are decoded as orjson allows; where
they are written out whole (a judge's prompt, a kept trace, a user's scorer) a value nested
deeper than the bound is given as `DEEPER_TEXT` instead (`within_depth`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import orjson

#: Every byte but brackets' (UTF-8 encodes no other character with them), to delete.
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")

#: Decoded JSON or Python literals nested deeper than this stay text. The decoders accept about
#: 1,000 levels (orjson 1,024, Python's parser 200), and what reads a decoded value after them
#: (`json.dumps`, text and redaction walks) recurses once or twice a level within Python's limit
#: of 1,000 frames: a 1,000-level `metadata` failed every scorer of its run.
MAX_DECODED_DEPTH = 64


class TooDeep(orjson.JSONDecodeError):
    """Raised by `loads` for JSON nested deeper than `MAX_DECODED_DEPTH`: callers already
    handling text that is not JSON treat it the same way."""

    def __init__(self) -> None:
        super().__init__(f"nested deeper than {MAX_DECODED_DEPTH} levels", "", 0)


#: What stands for a decoded value nested deeper than `MAX_DECODED_DEPTH` where it is written out.
DEEPER_TEXT = f"(nested deeper than {MAX_DECODED_DEPTH} levels)"


def loads(text: str | bytes) -> Any:
    """`orjson.loads`, refusing (`TooDeep`) a document nested deeper than `MAX_DECODED_DEPTH`."""
    value = orjson.loads(text)
    if too_deep(text, value):
        raise TooDeep
    return value


def too_deep(text: str | bytes, value: Any) -> bool:
    # A value that deep needs that many opening brackets: most texts are told by two counts.
    # The others by their brackets alone, innermost pairs taken away once a level, in C: only
    # a text left with some after `MAX_DECODED_DEPTH` levels (or brackets unbalanced by those in
    # its strings) has its value walked, without recursion, stopping at the bound.
    if len(text) <= 2 * MAX_DECODED_DEPTH:
        return False
    if isinstance(text, str):
        if text.count("[") + text.count("{") <= MAX_DECODED_DEPTH:
            return False
        text = text.encode("utf-8", "surrogatepass")
    elif text.count(b"[") + text.count(b"{") <= MAX_DECODED_DEPTH:
        return False
    brackets = text.translate(None, _NOT_BRACKETS)
    for _ in range(MAX_DECODED_DEPTH):
        inner = brackets.replace(b"[]", b"").replace(b"{}", b"")
        if not inner:
            return False
        if len(inner) == len(brackets):
            break
        brackets = inner
    return nested_deeper(value, MAX_DECODED_DEPTH)


def nested_deeper(value: Any, limit: int) -> bool:
    """Whether lists, tuples and mappings in `value` nest more than `limit` levels."""
    return beyond_bounds(value, limit) is not None


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _is_container(value: Any) -> bool:
    kind = type(value)
    if kind is dict or kind is list:
        return True
    return kind not in _SCALARS and isinstance(value, (Mapping, list, tuple))


def beyond_bounds(value: Any, depth: int, values: int | None = None) -> Literal["depth", "values"] | None:
    """The one walk of a decoded value's size, without recursion (so that the walk itself is
    bounded), stopping at the first bound passed: `depth` when lists, tuples and mappings in
    `value` nest more than `depth` levels, `values` when they hold more than `values` values."""
    if not _is_container(value):
        return None
    stack: list[tuple[Any, int]] = [(value, 0)]
    nodes = 1
    while stack:
        current, level = stack.pop()
        if level >= depth:
            return "depth"
        children = current.values() if isinstance(current, Mapping) else current
        if values is not None:
            nodes += len(children)
            if nodes > values:
                return "values"
        stack.extend((child, level + 1) for child in children if _is_container(child))
    return None


def within_depth(value: Any) -> Any:
    """`value`, or `DEEPER_TEXT` when it nests deeper than `MAX_DECODED_DEPTH`: what recursive code
    (`json.dumps` needs a frame or two a level, orjson refuses 255) can be given whole."""
    return DEEPER_TEXT if nested_deeper(value, MAX_DECODED_DEPTH) else value
