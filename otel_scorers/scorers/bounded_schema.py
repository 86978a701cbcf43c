"""JSON documents and JSON Schemas from untrusted places (an agent's answer, a tool's arguments, a
schema a trace declares), read and validated with bounded work.

- A document is at most `MAX_DOCUMENT_CHARS` characters, nests at most `MAX_DEPTH` levels and
  holds at most `MAX_NODES` values; beyond, it is not validated (`TooLarge`).
- A schema is at most `MAX_SCHEMA_CHARS` characters of JSON and nests at most `MAX_DEPTH` levels;
  it must be a valid schema of its draft (`$schema`, else draft 2020-12). Only references inside
  the document resolve: the validator's registry retrieves nothing (no network, no file, no
  FIFO), where the library left alone would fetch `http://` and `file://` URIs; a reference
  outside the document is `Unresolvable`.
- Validation is the `jsonschema` library's, with the keywords of `schema_keywords` in place of
  its own: user patterns (`pattern`, `patternProperties`, and `additionalProperties` beside them)
  searched through the project's bounded regular expressions, `uniqueItems` and `enum` in linear
  time, and every keyword (the combinators `$ref`, `allOf`, `anyOf`... above all) looking at the
  deadline as it starts: a `TimeoutError` once it is spent. A schema that refers to itself
  without end fails as `TooLarge`, never as a crash.
- A schema of the common keywords is first tested by `schema_quick_test`, which passes most
  documents in a microsecond or two; the library decides the rest and words their violations.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
import referencing
import referencing.exceptions
import regex

from otel_scorers.conventions.formats.bounded_json import MAX_DECODED_DEPTH, beyond_bounds
from otel_scorers.scorers import schema_quick_test
from otel_scorers.scorers.schema_keywords import bounded_keywords, compiled, deadline, short

MAX_DOCUMENT_CHARS = 1_000_000
MAX_SCHEMA_CHARS = 200_000
#: Nesting of documents and schemas: far beyond any real one, well within the validator's own
#: recursion (a few interpreter frames per level): the bound of every decoded value.
MAX_DEPTH = MAX_DECODED_DEPTH
MAX_NODES = 200_000
#: Violations named in a reason: the first ones, in the document's order.
MAX_VIOLATIONS = 3


def _retrieve_nothing(uri: str) -> referencing.Resource[Any]:
    """What the validators' registry fetches for a reference outside the schema: nothing. The
    library's default would open `http://` (with no timeout) and `file://` URIs named by a
    schema that a trace declares."""
    raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]


#: The registry of every validator made here: the drafts' own meta-schemas (the library adds
#: them) and nothing retrieved.
_REGISTRY: referencing.Registry[Any] = referencing.Registry(retrieve=_retrieve_nothing)  # type: ignore[call-arg]


class TooLarge(ValueError):
    """A document or schema beyond the bounds: not validated."""


class Unresolvable(ValueError):
    """A schema refers to a document other than itself, which is never fetched."""


def parse_document(text: str) -> Any:
    """`text` as JSON, within the bounds; `ValueError` (a `TooLarge` for the bounds) when not."""
    if len(text) > MAX_DOCUMENT_CHARS:
        raise TooLarge(f"{len(text):,} characters, more than the {MAX_DOCUMENT_CHARS:,} read")
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        if "recursion" in str(exc) or "depth" in str(exc):
            raise TooLarge(f"nested more than {MAX_DEPTH} levels deep") from None
        raise ValueError(str(exc)) from None
    if len(text) > _WITHIN_BOUNDS_CHARS:  # shorter text cannot nest or hold more than the bounds
        check_size(value)
    return value


#: Each level of nesting takes two characters, each value at least two with its separator.
_WITHIN_BOUNDS_CHARS = 2 * MAX_DEPTH


def check_size(value: Any) -> None:
    """`TooLarge` when `value` nests deeper than `MAX_DEPTH` or holds more than `MAX_NODES` values
    (`bounded_json.beyond_bounds`, the walk that bounds decoded values' depth)."""
    beyond = beyond_bounds(value, MAX_DEPTH, MAX_NODES)
    if beyond == "depth":
        raise TooLarge(f"nested more than {MAX_DEPTH} levels deep")
    if beyond == "values":
        raise TooLarge(f"more than {MAX_NODES:,} values")


@dataclass(frozen=True, slots=True)
class SchemaCheck:
    """One schema, ready to validate documents against: `violations(document)`. `valid` is the
    quick test of a schema that uses only the common keywords (`quick_test`), None otherwise."""

    schema: Mapping[str, Any] | bool
    validator: Any
    valid: Callable[[Any], bool] | None = None

    def violations(self, document: Any, timeout_s: float, base: str = "$") -> list[str]:
        """The first `MAX_VIOLATIONS` violations, each `at <path>: <message>` (empty when valid),
        paths starting at `base` (where `document` sits in a larger one).
        `TimeoutError` after `timeout_s`; `TooLarge` for a document beyond the bounds that the
        quick test did not pass, or a schema that recurses without end."""
        if self.valid is not None and self.valid(document):
            return []
        check_size(document)  # the library's walk is bounded by the document; the quick test's by the schema
        token = deadline.set(time.perf_counter() + timeout_s)
        found: list[str] = []
        try:
            for error in self.validator.iter_errors(document):
                found.append(f"at {json_path(error.absolute_path, base)}: {short(error.message)}")
                if len(found) >= MAX_VIOLATIONS:
                    break
        except RecursionError:
            raise TooLarge("the schema refers to itself without end") from None
        except referencing.exceptions.Unresolvable as exc:
            raise Unresolvable(
                f"the schema refers to {short(str(getattr(exc, 'ref', exc)), 80)!r}, outside itself, "
                "and references are never fetched"
            ) from None
        finally:
            deadline.reset(token)
        return found


def schema_check(schema: Any, what: str = "schema") -> SchemaCheck:
    """A `SchemaCheck` for `schema`; `ValueError` naming `what` when it is not a valid, bounded
    JSON Schema."""
    if isinstance(schema, bool):
        return SchemaCheck(schema, _validator_class(None)(schema, registry=_REGISTRY), quick_test(schema))
    if not isinstance(schema, Mapping):
        raise ValueError(f"{what} must be a JSON Schema object, got {type(schema).__name__}")
    try:
        size = len(orjson.dumps(schema))
    except TypeError as exc:
        raise ValueError(f"{what} is not JSON: {exc}") from None
    if size > MAX_SCHEMA_CHARS:
        raise ValueError(f"{what} is {size:,} characters of JSON, more than {MAX_SCHEMA_CHARS:,}")
    try:
        check_size(schema)
    except TooLarge as exc:
        raise ValueError(f"{what} is {exc}") from None
    patterns = list(_patterns(schema))
    for pattern in patterns:
        try:
            compiled(pattern)
        except regex.error as exc:
            raise ValueError(f"{what} has an invalid pattern {pattern!r}: {exc}") from None
    if patterns and _uses(schema, "unevaluatedProperties"):
        raise ValueError(
            f"{what} uses unevaluatedProperties beside patternProperties, whose patterns could not "
            "be bounded there"
        )
    from jsonschema import SchemaError

    cls = _validator_class(schema.get("$schema"))
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        where = json_path(exc.absolute_path)
        raise ValueError(f"{what} is not a valid JSON Schema at {where}: {short(exc.message)}") from None
    return SchemaCheck(schema, cls(schema, registry=_REGISTRY), quick_test(schema))


def quick_test(schema: Any) -> Callable[[Any], bool] | None:
    """`schema_quick_test.quick_test`, knowing every keyword of the drafts the library knows."""
    return schema_quick_test.quick_test(schema, _keywords())


@functools.cache
def _keywords() -> frozenset[str]:
    """Every validation keyword of every draft the library knows."""
    names: set[str] = set()
    for cls in _drafts().values():
        names.update(cls.VALIDATORS)
    return frozenset(names)


def json_path(path: Any, base: str = "$") -> str:
    """A location in a document as a JSONPath (`$.items[0].price`), from `base`."""
    text = base
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier():
            text += f".{part}"
        else:
            text += "[" + orjson.dumps(str(part)).decode() + "]"
    return text


def _patterns(schema: Any) -> Iterator[str]:
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            if isinstance(node.get("pattern"), str):
                yield node["pattern"]
            properties = node.get("patternProperties")
            if isinstance(properties, Mapping):
                yield from (key for key in properties if isinstance(key, str))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _uses(schema: Any, keyword: str) -> bool:
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            if keyword in node:
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _validator_class(dialect: Any) -> Any:
    """The draft `dialect` names (`$schema`; 2020-12 when absent or unknown), with the bounded
    keywords."""
    drafts = _drafts()
    if isinstance(dialect, str):
        found = drafts.get(dialect.rstrip("#"))
        if found is not None:
            return found
    return drafts[""]


@functools.cache
def _drafts() -> dict[str, Any]:
    """Each draft's class with the bounded keywords, by its `$schema` URI (no trailing `#`), the
    default (2020-12) under "": made once."""
    from jsonschema import (
        Draft4Validator,
        Draft6Validator,
        Draft7Validator,
        Draft201909Validator,
        Draft202012Validator,
    )

    drafts: dict[str, Any] = {}
    for base in (
        Draft4Validator,
        Draft6Validator,
        Draft7Validator,
        Draft201909Validator,
        Draft202012Validator,
    ):
        bounded = bounded_keywords(base)
        uri = base.META_SCHEMA.get("$schema") or base.META_SCHEMA.get("$id")
        drafts[str(uri).rstrip("#")] = bounded
        if base is Draft202012Validator:
            drafts[""] = bounded
    return drafts
