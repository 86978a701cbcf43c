"""The keywords of JSON Schema that `bounded_schema`'s validators run in place of the `jsonschema`
library's: user patterns searched on the `regex` engine under a time limit, `uniqueItems` and
`enum` in linear time, and every keyword looking at the validation's deadline as it starts."""

from __future__ import annotations

import contextvars
import functools
import math
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import regex

from otel_scorers.scorers.quick_check import bounded_search

#: When the validation in progress must stop (a `time.perf_counter()` value).
deadline: contextvars.ContextVar[float] = contextvars.ContextVar("schema_deadline", default=math.inf)


def short(message: str, limit: int = 160) -> str:
    """`message` on one line, at most `limit` characters."""
    message = message.replace("\n", " ")
    return message if len(message) <= limit else message[: limit - 1] + "…"


def compiled(pattern: str) -> regex.Pattern[str]:
    """The pattern compiled; the short ones (nearly all) remembered, 256 of them at most."""
    return _remembered(pattern) if len(pattern) <= 1000 else regex.compile(pattern, regex.VERSION0)


@functools.lru_cache(maxsize=256)
def _remembered(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern, regex.VERSION0)


def _found(pattern: str, text: str) -> bool:
    remaining = deadline.get() - time.perf_counter()
    if remaining <= 0:
        raise TimeoutError("schema validation ran out of time")
    return bounded_search(compiled(pattern), text, remaining) is not None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if validator.is_type(instance, "string") and not _found(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in properties.items():
        for key, value in instance.items():
            if _found(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    original: Callable[..., Iterator[Any]],
) -> Callable[..., Iterator[Any]]:
    """The library's `additionalProperties`, with the keys that `patternProperties` matches found
    by bounded searches (the library would search them with Python's `re`)."""

    def additional(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterator[Any]:
        patterns = schema.get("patternProperties")
        if not patterns or not validator.is_type(instance, "object"):
            yield from original(validator, allowed, instance, schema)
            return
        from jsonschema import ValidationError

        declared = schema.get("properties", {})
        extras = sorted(
            (
                key
                for key in instance
                if key not in declared and not any(_found(pattern, key) for pattern in patterns)
            ),
            key=str,
        )
        if validator.is_type(allowed, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], allowed, path=extra)
        elif not allowed and extras:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in extras)
            listed = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {listed}")

    return additional


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if unique and validator.is_type(instance, "array"):
        seen: set[Any] = set()
        for item in instance:
            key = _equality_key(item)
            if key in seen:
                yield ValidationError(f"{short(repr(instance))} has non-unique elements")
                return
            seen.add(key)


def _equality_key(value: Any) -> Any:
    """A hashable key equal for values JSON Schema calls equal (1 and 1.0; not true and 1)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        return ("number", int(value) if isinstance(value, float) and value.is_integer() else value)
    if isinstance(value, Mapping):
        return ("object", frozenset((key, _equality_key(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return ("array", tuple(_equality_key(item) for item in value))
    return ("other", repr(value))


#: The allowed values of the `enum`s met, as `_equality_key`s, by the id of their list (the
#: list is kept beside them, so the id stays its own); emptied when it holds `_MAX_ENUMS`.
_enum_sets: dict[int, tuple[Any, frozenset[Any], str]] = {}
_MAX_ENUMS = 1024


def _enum(validator: Any, enums: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """The library's `enum`, in time linear in the instance: one look-up in a set of the allowed
    values (made once per schema), where the library compares the instance with each."""
    from jsonschema import ValidationError

    known = _enum_sets.get(id(enums))
    if known is None or known[0] is not enums:
        keys = frozenset(_equality_key(each) for each in enums) if isinstance(enums, list) else frozenset()
        known = (enums, keys, short(repr(enums), 400))
        if len(_enum_sets) >= _MAX_ENUMS:
            _enum_sets.clear()
        _enum_sets[id(enums)] = known
    if _equality_key(instance) not in known[1]:
        yield ValidationError(f"{short(repr(instance), 400)} is not one of {known[2]}")


def _timed(original: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    def keyword(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if time.perf_counter() > deadline.get():
            raise TimeoutError("schema validation ran out of time")
        yield from original(validator, value, instance, schema)

    return keyword


def bounded_keywords(base: Any) -> Any:
    from jsonschema import validators

    keywords = dict(base.VALIDATORS)
    changed: dict[str, Any] = {}
    if "pattern" in keywords:
        changed["pattern"] = _pattern
    if "patternProperties" in keywords:
        changed["patternProperties"] = _pattern_properties
    if "additionalProperties" in keywords:
        changed["additionalProperties"] = _additional_properties(keywords["additionalProperties"])
    if "uniqueItems" in keywords:
        changed["uniqueItems"] = _unique_items
    if "enum" in keywords:
        changed["enum"] = _enum
    # Every keyword looks at the deadline as it starts: the combinators, and the keywords that
    # descend into the document, are where the work of a hostile schema or document goes.
    for name in keywords:
        changed[name] = _timed(changed[name] if name in changed else keywords[name])
    return validators.extend(base, changed)  # type: ignore[no-untyped-call]
