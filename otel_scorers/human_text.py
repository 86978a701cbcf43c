"""Text written for a person to read: counts with their nouns."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`1 run`, `2 runs`: the count and its noun, plural unless the count is one."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
