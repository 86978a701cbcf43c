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


def held_bytes(*values: Any) -> int:
    """`sys.getsizeof` of `values` and of everything they contain: strings, numbers, dicts and
    other mappings, lists, tuples, sets and slotted dataclasses (`SpanRecord`, `ModelCall`), each
    container once. Never less than what they hold alone: what they share with other values (a
    resource's attributes, interned keys) is counted again, a bound's margin. Walked with a
    stack, not recursively, so that a value nested deeper than the recursion limit is counted."""
    total = 0
    stack = list(values)
    seen: set[int] = set()
    size = sys.getsizeof
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is str or kind is int or kind is float or kind is bool or value is None or kind is bytes:
            total += size(value)
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        if kind is dict:
            total += size(value)
            stack.extend(value.keys())
            stack.extend(value.values())
        elif kind is list or kind is tuple or kind is set or kind is frozenset or isinstance(value, tuple):
            total += size(value)
            stack.extend(value)
        elif isinstance(value, Mapping):
            total += size(value) + _VIEWED_DICT_BYTES + _VIEWED_ENTRY_BYTES * len(value)
            stack.extend(value.keys())
            stack.extend(value.values())
        else:
            total += size(value)
            stack.extend(getattr(value, name, None) for name in getattr(kind, "__slots__", ()))
    return total
