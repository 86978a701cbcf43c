"""A quick test for JSON Schemas of the common keywords, beside the `jsonschema` library.

Most tool schemas and answer schemas use a handful of keywords (`type`, `enum`, `const`,
`properties`, `required`, `additionalProperties` true or false, `items`, length and range
bounds). For those, a closure made once per schema tests a document in a microsecond or two where
the library takes tens (its validator is rebuilt at each level it descends). The quick test only
ever says "valid" when the library would: it answers False whenever it is not sure (a float for
an integer, a number in an enum), and the library then decides, and words the violations
(`bounded_schema.SchemaCheck`). tests/test_structure_checks.py holds the two to agree on
generated schemas and documents.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
#: What the quick test reads; other keywords of any draft send a schema to the library alone.
_QUICK = frozenset(
    {
        "type", "enum", "const", "properties", "required", "additionalProperties", "items",
        "minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum",
    }
)  # fmt: skip
_PLAIN = (str, bool, int, type(None))


def quick_test(schema: Any, keywords: frozenset[str]) -> Callable[[Any], bool] | None:
    """A test that is True only for documents `schema` accepts, or None when `schema` uses a
    keyword of `keywords` (every validation keyword of every draft) that it does not read."""
    if schema is True:
        return lambda value: True
    if not isinstance(schema, Mapping):
        return None
    if any(key in keywords and key not in _QUICK for key in schema):
        return None
    tests: list[Callable[[Any], bool]] = []
    kind = schema.get("type")
    if kind is not None:
        kinds = [kind] if isinstance(kind, str) else kind
        if not isinstance(kinds, list) or not all(isinstance(each, str) and each in _TYPES for each in kinds):
            return None
        checks = tuple(_TYPES[each] for each in kinds)
        tests.append(checks[0] if len(checks) == 1 else lambda value: any(check(value) for check in checks))
    for key in ("enum", "const"):
        if key in schema:
            allowed = schema[key] if key == "enum" else [schema[key]]
            if not isinstance(allowed, list) or not all(isinstance(each, _PLAIN) for each in allowed):
                return None
            tests.append(_one_of(tuple((type(each), each) for each in allowed)))
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
    if inner or required or not extra:
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

        tests.append(object_test)
    if "items" in schema:
        item_test = quick_test(schema["items"], keywords)
        if item_test is None:
            return None
        tests.append(lambda value: not isinstance(value, list) or all(item_test(item) for item in value))
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
    return _all_of(tuple(tests))


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
    """`enum`/`const` of plain values: the same type and value (JSON tells `true` from `1`)."""
    return lambda value: (type(value), value) in choices


def _bounded_by(
    applies: Any, measure: Callable[[Any], Any], bound: float, least: bool, numbers_only: bool = False
) -> Callable[[Any], bool]:
    def test(value: Any) -> bool:
        if not isinstance(value, applies) or (numbers_only and isinstance(value, bool)):
            return True
        measured = measure(value)
        return bool(measured >= bound if least else measured <= bound)

    return test
