"""What made a result: a scorer's evaluator version, a short digest of its type, its arguments, its
prompt version and its judge model.

The digest is the SHA-256 of the canonical JSON of those four (keys sorted, no whitespace, UTF-8),
its first 12 hex digits. Nothing in it depends on the process (no `hash()`, no object ids, no
memory addresses): the same configuration gives the same version in every process, on every
machine and in every release, and a change of prompt, argument or model gives another. A value
JSON cannot hold is written as what names it: a function or class by `module:qualname`, a pydantic
model class by its JSON schema, a dataclass by its compared fields, a set sorted.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

#: Hex digits kept of the SHA-256: 48 bits, ample to tell apart the versions of one scorer.
VERSION_DIGITS = 12
#: Nesting followed in arguments before the rest is named by its type (a cycle cannot loop).
_MAX_DEPTH = 32


@dataclass(frozen=True, slots=True)
class Evaluator:
    """What a scorer is, as far as its results are concerned: its `type` (the config type, or a
    custom scorer's import path), its `args`, and for a judge its `prompt_version` and `model`."""

    type: str
    args: Mapping[str, Any] = field(default_factory=dict)
    prompt_version: str | None = None
    model: str | None = None

    @property
    def version(self) -> str:
        return digest(
            {
                "type": self.type,
                "args": canonical(self.args),
                "prompt_version": self.prompt_version,
                "model": self.model,
            }
        )


@runtime_checkable
class DescribesEvaluator(Protocol):
    """A scorer that says what it is (every built-in scorer does)."""

    def evaluator(self) -> Evaluator: ...


def evaluator_of(scorer: Any) -> Evaluator:
    """The scorer's own description, else its class's import path, with its fields when it is a
    dataclass (a scorer object of a user's, a conversation scorer)."""
    if isinstance(scorer, DescribesEvaluator):
        return scorer.evaluator()
    fields = canonical(scorer) if dataclasses.is_dataclass(scorer) else None
    return Evaluator(qualified_name(type(scorer)), {"fields": fields} if fields is not None else {})


def evaluator_version(scorer: Any) -> str:
    return evaluator_of(scorer).version


def digest(value: Any) -> str:
    """The first `VERSION_DIGITS` hex digits of the SHA-256 of `value`'s canonical JSON."""
    text = json.dumps(canonical(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:VERSION_DIGITS]


def qualified_name(obj: Any) -> str:
    module = getattr(obj, "__module__", None) or "?"
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__qualname__
    return f"{module}:{name}"


def canonical(value: Any, depth: int = 0) -> Any:
    """`value` as plain JSON data that is the same in every process."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if depth >= _MAX_DEPTH:
        return qualified_name(type(value))
    deeper = depth + 1
    if isinstance(value, enum.Enum):
        return canonical(value.value, deeper)
    if isinstance(value, Mapping):
        return {str(key): canonical(item, deeper) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical(item, deeper) for item in value]
    if isinstance(value, (set, frozenset)):
        items = [canonical(item, deeper) for item in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True, ensure_ascii=False))
    if isinstance(value, re.Pattern):
        return {"pattern": value.pattern, "flags": int(value.flags)}
    if isinstance(value, type):
        schema = getattr(value, "model_json_schema", None)  # a pydantic model: what the judge is asked for
        if callable(schema):
            try:
                return {"class": qualified_name(value), "schema": canonical(schema(), deeper)}
            except Exception:  # a generic model left open: named only
                return qualified_name(value)
        return qualified_name(value)
    if dataclasses.is_dataclass(value):
        return {
            "class": qualified_name(type(value)),
            "fields": {
                item.name: canonical(getattr(value, item.name), deeper)
                for item in dataclasses.fields(value)
                if item.compare
            },
        }
    dump = getattr(value, "model_dump", None)  # a pydantic model instance (a judge's config)
    if callable(dump):
        try:
            return canonical(dump(mode="json"), deeper)
        except Exception:
            return qualified_name(type(value))
    if callable(value):
        return qualified_name(value)
    return qualified_name(type(value))
