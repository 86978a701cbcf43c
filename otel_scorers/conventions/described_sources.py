"""A description's sources and conditions, compiled: where a value is read on a span (an attribute,
an event's attribute, the span's name, a fixed text; a JSON path into it) and when a description's
part applies to a span (`When`: attributes and their values, name prefixes, sources that must hold
a value)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

import orjson

from otel_scorers.conventions import described_text as text
from otel_scorers.conventions.description import ANY_VALUE, FIRST_VALUE, Source, When, parse_path
from otel_scorers.conventions.flat_records import nested_record
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import is_mapping
from otel_scorers.span_record import SpanRecord

MISSING: Any = object()
#: While `runs --explain` reads a span (only then): each source whose JSON `path` matched nothing.
PATH_MISSES: ContextVar[list[str] | None] = ContextVar("otel_scorers_path_misses", default=None)


@dataclass(frozen=True, slots=True)
class CompiledSource:
    attribute: str | None
    event: str | None
    span_name: bool
    path: tuple[str | int, ...]
    strip_prefix: str | None
    strip_suffixes: tuple[str, ...]
    #: The path as the description wrote it, for `runs --explain`.
    path_text: str | None = None
    #: A fixed text (`value`), read from nowhere (with `attribute`: on a span that carries it).
    value: str | None = None
    json_value: bool = False
    #: A record flattened into the keys that start with this (`attributes_under`).
    under: str | None = None
    #: The flattened record's keys are paths into it (`nested`).
    nested: bool = False


def compiled_sources(
    spec: Sequence[Source] | None, bare: Mapping[str, str] | None = None
) -> tuple[CompiledSource, ...]:
    """`spec` compiled; with `bare` (`bare_keys_of`), each source of an attribute in it followed
    by the same source in that attribute's bare key."""
    compiled: list[CompiledSource] = []
    for source in spec or ():
        item = CompiledSource(
            source.attribute,
            source.event,
            source.span == "name",
            parse_path(source.path) if source.path is not None else (),
            source.strip_prefix,
            text.suffixes(source.strip_suffix),
            source.path,
            source.value,
            source.json_value,
            source.attributes_under,
            source.nested,
        )
        compiled.append(item)
        moved = bare.get(item.attribute) if bare and item.attribute and item.event is None else None
        if moved is not None:
            compiled.append(replace(item, attribute=moved))
    return tuple(compiled)


@dataclass(frozen=True, slots=True)
class CompiledWhen:
    #: attribute -> accepted values (None: any value).
    attributes: tuple[tuple[str, frozenset[Any] | None], ...]
    name_prefixes: tuple[str, ...]
    #: Sources that must each find a value (`When.holds`), asked last.
    holds: tuple[CompiledSource, ...] = ()

    @property
    def specificity(self) -> int:
        """How many conditions of the span's attributes and name it states."""
        return len(self.attributes) + bool(self.name_prefixes)

    def matches(self, span: SpanRecord) -> bool:
        if self.name_prefixes and not span.name.startswith(self.name_prefixes):
            return False
        attributes = span.attributes
        for key, values in self.attributes:
            value = attributes.get(key, MISSING)
            if value is MISSING:
                return False
            if values is not None:
                try:
                    if value not in values:
                        if not isinstance(value, tuple):
                            return False
                        if values.isdisjoint(value):  # a list attribute holds one of them
                            return False
                except TypeError:  # a list: one of its items is one of the values named
                    if not isinstance(value, list) or values.isdisjoint(_hashable(value)):
                        return False
        return not self.holds or all(found_on(span, source) for source in self.holds)


def untyped(when: CompiledWhen, span: SpanRecord) -> bool:
    """The span carries none of the keys `when` names a kind by (a key with listed values): its
    vocabulary left it untyped."""
    kinds = [key for key, values in when.attributes if values is not None]
    return bool(kinds) and not any(key in span.attributes for key in kinds)


def _hashable(items: list[Any]) -> list[Any]:
    return [item for item in items if isinstance(item, str | int | float | bool)]


def compiled_when(when: When, json_values: bool) -> CompiledWhen:
    attributes: list[tuple[str, frozenset[Any] | None]] = []
    for key, value in when.attributes.items():
        values = value if isinstance(value, list) else [value]
        if ANY_VALUE in values:
            attributes.append((key, None))
            continue
        accepted = {orjson.dumps(item).decode() if json_values else item for item in values}
        attributes.append((key, frozenset(accepted)))
    return CompiledWhen(tuple(attributes), tuple(listed(when.name_prefix)), compiled_sources(when.holds))


def listed(value: str | list[str] | None) -> list[str]:
    """A description's one-or-many field as a list of what it names (empty, when nothing)."""
    return [item for item in (value if isinstance(value, list) else [value]) if item]


def path_missed(source: CompiledSource) -> None:
    misses = PATH_MISSES.get()
    if misses is not None:
        where = f"event {source.event}: {source.attribute}" if source.event else str(source.attribute)
        misses.append(f"{where}: path {source.path_text!r} matched nothing in its value")


def raw_value(span: SpanRecord, source: CompiledSource) -> Any:
    if source.value is not None:
        if source.attribute is not None and source.attribute not in span.attributes:
            return MISSING
        return source.value
    if source.span_name:
        return span.name
    attributes = span.attributes
    if source.event is not None:
        event = next((event for event in span.events if event.name == source.event), None)
        if event is None:
            return MISSING
        attributes = event.attributes
    if source.under is not None:
        return flattened_record(attributes, source.under, source.nested)
    assert source.attribute is not None  # checked by `Source`
    return attributes.get(source.attribute, MISSING)


def flattened_record(attributes: Mapping[str, Any], start: str, nested: bool = False) -> Any:
    """The attributes whose key starts with `start`, as one object keyed by the rest of the key
    (with `nested`, the rest a path into the object: `nested_record`)."""
    size = len(start)
    record = {
        key[size:]: value for key, value in attributes.items() if key.startswith(start) and len(key) > size
    }
    if not record:
        return MISSING
    return nested_record(record) if nested else record


def found_on(span: SpanRecord, source: CompiledSource) -> bool:
    """The source finds a value on the span (its path, when it has one, in the value's JSON)."""
    value = raw_value(span, source)
    if value is None or value is MISSING:
        return False
    if source.path:
        value = walk(decode_json(value), source.path, decode_json)
    return value is not None and value != ""


def walk(value: Any, path: tuple[str | int, ...], decode: Callable[[Any], Any]) -> Any:
    for step in path:
        if isinstance(step, int):
            if not isinstance(value, (list, tuple)) or not -len(value) <= step < len(value):
                return None
            value = value[step]
        elif not is_mapping(value):
            return None
        elif step == FIRST_VALUE:
            value = next(iter(value.values()), None)
        else:
            value = value.get(step)
        if isinstance(value, str) and value[:1] in ("{", "["):
            value = decode(value)  # JSON inside JSON: a message's encoded arguments
    return value
