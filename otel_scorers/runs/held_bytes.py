"""About what a value holds in memory, in bytes: what a bound in bytes counts of what it keeps."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

#: What a mapping other than a dict (a read-only view over one) holds per entry and in itself:
#: its dict is not reachable through `sys.getsizeof`, so it is counted high (a dict's entry takes
#: 24 bytes and its index up to 8, grown up to three times its entries).
_VIEWED_DICT_BYTES = 232
_VIEWED_ENTRY_BYTES = 104
#: A string's size, asked of `str` directly: `sys.getsizeof` parses its arguments and looks the
#: method up for each value, several times the cost (strings hold no GC header to add).
_STR_BYTES = str.__sizeof__


def held_bytes(*values: Any) -> int:
    """`sys.getsizeof` of `values` and of everything they contain: strings, numbers, dicts and
    other mappings, lists, tuples, sets and slotted dataclasses (`SpanRecord`, `ModelCall`), each
    container once. Never less than what they hold alone: what they share with other values (a
    resource's attributes, interned keys) is counted again, a bound's margin. Walked with a
    stack, not recursively, so that a value nested deeper than the recursion limit is counted."""
    size = sys.getsizeof
    str_bytes = _STR_BYTES
    total = 0
    stack = list(values)
    seen: set[int] = set()
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is str:
            total += str_bytes(value)
            continue
        total += size(value)
        if kind is int or kind is float or kind is bool or value is None:
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        if kind is dict:
            stack.extend(value)
            stack.extend(value.values())
        elif kind is list or kind is tuple or isinstance(value, (tuple, set, frozenset)):
            stack.extend(value)
        elif hasattr(kind, "__slots__"):
            stack.extend([getattr(value, name, None) for name in kind.__slots__])
        elif isinstance(value, Mapping):
            total += _VIEWED_DICT_BYTES + _VIEWED_ENTRY_BYTES * len(value)
            stack.extend(value)
            stack.extend(value.values())
    return total
