"""A record an instrumentation flattened into one attribute per leaf (`messages.0.role`,
`messages.0.contents.0.content`), built back: each key's dotted steps a path into it, a step that is
a number an item of a list."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def nested_record(flat: Mapping[str, Any]) -> Any:
    """`flat` (keys the rest of each flattened key: `0.role`) as the nested data it was written from;
    a level whose steps are all numbers is a list in their order."""
    root: dict[str, Any] = {}
    for key, value in flat.items():
        level = root
        *steps, last = key.split(".")
        for step in steps:
            below = level.get(step)
            if not isinstance(below, dict):  # a leaf written beside deeper keys: the deeper win
                below = level[step] = {}
            level = below
        if not isinstance(level.get(last), dict):
            level[last] = value
    return _listed(root)


def _listed(level: Any) -> Any:
    if not isinstance(level, dict):
        return level
    items = {step: _listed(value) for step, value in level.items()}
    if items and all(step.isdigit() for step in items):
        return [items[step] for step in sorted(items, key=int)]
    return items
