"""A quick test for JSON Schemas of the common keywords, beside the `jsonschema` library.

Most tool schemas and answer schemas use a handful of keywords (`type`, `enum`, `const`,
`properties`, `required`, `additionalProperties` true or false, `items`, length and range
bounds). For those, a closure made once per schema tests a document in a microsecond or two where
the library takes tens (its validator is rebuilt at each level it descends). The quick test only
ever says "valid" when the library would: it answers False whenever it is not sure (a float for
an integer, a number in an enum), and the library then decides, and words the violations
(`bounded_schema.SchemaCheck`). tests/scorers/test_structure_checks.py holds the two to agree on
generated schemas and documents.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

_TYPES: dict[str, Callable[[Any], bool]] = {
    "null": lambda value: value is None,
    "boolean": lambda value: isinstance(value, bool),
    "string": lambda value: isinstance(value, str),
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "number": lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
    "array": lambda value: isinstance(value, list),
    "object": lambda value: isinstance(value, dict),
}
_PLAIN = (str, bool, int, type(None))
#: A test of a document: True only when the schema accepts it.
_Test = Callable[[Any], bool]
#: What a part of a schema that is absent adds (one shared empty tuple: nothing to allocate).
_NO_TESTS: tuple[_Test, ...] = ()


def quick_test(schema: Any, keywords: frozenset[str]) -> _Test | None:
    """A test that is True only for documents `schema` accepts, or None when `schema` uses a
    keyword of `keywords` (every validation keyword of every draft) that it does not read."""
    if schema is True:
        return lambda value: True
    if not isinstance(schema, Mapping):
        return None
    if any(key in keywords and key not in _QUICK for key in schema):
        return None
    tests: list[_Test] = []
    for reads, part in _PARTS:
        if reads.isdisjoint(schema):
            continue
        found = part(schema, keywords)
        if found is None:
            return None
        tests += found
    return _all_of(tuple(tests))


def _type_tests(schema: Mapping[str, Any], keywords: frozenset[str]) -> Sequence[_Test] | None:
    """`type`: one JSON type or a list of them."""
    kind = schema.get("type")
    if kind is None:
        return _NO_TESTS
    kinds = [kind] if isinstance(kind, str) else kind
    if not isinstance(kinds, list) or not all(isinstance(each, str) and each in _TYPES for each in kinds):
        return None
    checks = tuple(_TYPES[each] for each in kinds)
    return [checks[0] if len(checks) == 1 else lambda value: any(check(value) for check in checks)]


def _value_tests(schema: Mapping[str, Any], keywords: frozenset[str]) -> Sequence[_Test] | None:
    """`enum` and `const`, of plain values only."""
    tests = []
    for key in ("enum", "const"):
        if key in schema:
            allowed = schema[key] if key == "enum" else [schema[key]]
            if not isinstance(allowed, list) or not all(isinstance(each, _PLAIN) for each in allowed):
                return None
            tests.append(_one_of(tuple((type(each), each) for each in allowed)))
    return tests


def _object_tests(schema: Mapping[str, Any], keywords: frozenset[str]) -> Sequence[_Test] | None:
    """`properties` (each quick-tested in turn), `required`, and `additionalProperties` true or
    false, in one test of an object's members."""
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        return None
    inner = {}
    for name, subschema in properties.items():
        test = quick_test(subschema, keywords)
        if test is None:
            return None
        inner[name] = test
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        return None
    extra = schema.get("additionalProperties", True)
    if not isinstance(extra, bool):
        return None
    if not (inner or required or not extra):
        return _NO_TESTS
    known = frozenset(inner)

    def object_test(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        for name in required:
            if name not in value:
                return False
        for name, item in value.items():
            test = inner.get(name)
            if test is None:
                if not extra and name not in known:
                    return False
            elif not test(item):
                return False
        return True

    return [object_test]


def _items_tests(schema: Mapping[str, Any], keywords: frozenset[str]) -> Sequence[_Test] | None:
    """`items`: one schema every item of an array meets."""
    item_test = quick_test(schema["items"], keywords)
    if item_test is None:
        return None
    return [lambda value: not isinstance(value, list) or all(item_test(item) for item in value)]


def _bound_tests(schema: Mapping[str, Any], keywords: frozenset[str]) -> Sequence[_Test] | None:
    """The bounds on a string's or an array's length and on a number."""
    tests = []
    for key, applies, measure, least in (
        ("minLength", str, len, True),
        ("maxLength", str, len, False),
        ("minItems", list, len, True),
        ("maxItems", list, len, False),
    ):
        if key in schema:
            bound = schema[key]
            if not isinstance(bound, int) or isinstance(bound, bool):
                return None
            tests.append(_bounded_by(applies, measure, bound, least))
    for key, least in (("minimum", True), ("maximum", False)):
        if key in schema:
            bound = schema[key]
            if not isinstance(bound, (int, float)) or isinstance(bound, bool):
                return None
            tests.append(_bounded_by((int, float), lambda value: value, bound, least, numbers_only=True))
    return tests


#: The parts of a schema the quick test reads, in the order their tests run: the keywords each
#: reads (it is left out when the schema has none of them), and what makes its tests, or None
#: when it is not sure.
_PARTS: tuple[
    tuple[frozenset[str], Callable[[Mapping[str, Any], frozenset[str]], Sequence[_Test] | None]], ...
] = (
    (frozenset({"type"}), _type_tests),
    (frozenset({"enum", "const"}), _value_tests),
    (frozenset({"properties", "required", "additionalProperties"}), _object_tests),
    (frozenset({"items"}), _items_tests),
    (frozenset({"minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum"}), _bound_tests),
)
#: What the quick test reads; other keywords of any draft send a schema to the library alone.
_QUICK = frozenset().union(*(reads for reads, _ in _PARTS))


def _all_of(tests: tuple[Callable[[Any], bool], ...]) -> Callable[[Any], bool]:
    if not tests:
        return lambda value: True
    if len(tests) == 1:
        return tests[0]

    def test(value: Any) -> bool:
        for each in tests:  # noqa: SIM110 (a loop: faster than all() over a generator)
            if not each(value):
                return False
        return True

    return test


def _one_of(choices: tuple[tuple[type, Any], ...]) -> Callable[[Any], bool]:
    """`enum`/`const` of plain values: the same type and value (JSON tells `true` from `1`), one
    look-up in a set whatever the number of values (plain values are hashable)."""
    allowed = frozenset(choices)

    def test(value: Any) -> bool:
        try:
            return (type(value), value) in allowed
        except TypeError:  # an unhashable value (a list, an object) is none of them
            return False

    return test


def _bounded_by(
    applies: Any, measure: Callable[[Any], Any], bound: float, least: bool, numbers_only: bool = False
) -> Callable[[Any], bool]:
    def test(value: Any) -> bool:
        if not isinstance(value, applies) or (numbers_only and isinstance(value, bool)):
            return True
        measured = measure(value)
        return bool(measured >= bound if least else measured <= bound)

    return test
