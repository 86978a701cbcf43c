"""Declarative predicates over a run, deciding which runs a scorer binding looks at.

    {op: eq, left: {path: agent.name}, right: {literal: weather}}
    {op: and, conditions: [{op: gte, left: {path: tool_calls.count}, right: {literal: 1}}, ...]}
    {op: not, condition: {op: exists, left: {path: attributes.user.tier}}}

Comparisons `eq ne lt lte gt gte`; membership `in notIn` (right side a list); presence `exists
notExists`; `truthy falsy`; composition `and or not`. Operands are `{path: ...}` or
`{literal: ...}`. An unknown path, or a comparison of a path with a literal of another kind
(`agent.name` with a number), is an error when the filter is parsed, never at run time; for
`attributes.*` and `resource.*`, whose kinds are known only at run time, a comparison between
values that cannot be ordered is simply false.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from otel_scorers.errors import ConfigError
from otel_scorers.model import AgentRun
from otel_scorers.runs.paths import ABSENT as _ABSENT
from otel_scorers.runs.paths import PATH_KINDS, path_getter

Predicate = Callable[[AgentRun], bool]

#: Deeper than this, a filter is a mistake (or an attack on the parser), not a policy.
MAX_DEPTH = 32

_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "lte": operator.le,
    "gt": operator.gt,
    "gte": operator.ge,
}
_UNARY = ("exists", "notExists", "truthy", "falsy")
_ALL_OPS = (*_COMPARISONS, "in", "notIn", *_UNARY, "and", "or", "not")


def parse_filter(node: Any, path: str = "filter", depth: int = 0) -> Predicate:
    """Compile a filter description into a predicate; errors name the bad key's path."""
    if callable(node):
        return node  # type: ignore[no-any-return]
    if depth >= MAX_DEPTH:
        raise ConfigError(path, f"filters nest at most {MAX_DEPTH} levels deep")
    if not isinstance(node, Mapping):
        raise ConfigError(path, f"a filter must be a mapping with 'op', got {type(node).__name__}")
    op = node.get("op")
    if op not in _ALL_OPS:
        raise ConfigError(f"{path}.op", f"unknown operator {op!r}; expected one of {', '.join(_ALL_OPS)}")
    if op in ("and", "or"):
        conditions = node.get("conditions")
        if not isinstance(conditions, list) or not conditions:
            raise ConfigError(f"{path}.conditions", f"'{op}' needs a non-empty list of conditions")
        parts = [
            parse_filter(child, f"{path}.conditions[{i}]", depth + 1) for i, child in enumerate(conditions)
        ]
        _only(node, ("op", "conditions"), path)
        if op == "and":
            return lambda run: all(part(run) for part in parts)
        return lambda run: any(part(run) for part in parts)
    if op == "not":
        _only(node, ("op", "condition"), path)
        inner = parse_filter(node.get("condition"), f"{path}.condition", depth + 1)
        return lambda run: not inner(run)

    left = _operand(node.get("left"), f"{path}.left")
    if op in _UNARY:
        _only(node, ("op", "left"), path)
        if op == "exists":
            return lambda run: left(run) not in (_ABSENT, None)
        if op == "notExists":
            return lambda run: left(run) in (_ABSENT, None)
        if op == "truthy":
            return lambda run: _truthy(left(run))
        return lambda run: not _truthy(left(run))

    _only(node, ("op", "left", "right"), path)
    right = _operand(node.get("right"), f"{path}.right")
    if op in ("in", "notIn"):
        literal = node["right"].get("literal", _ABSENT) if isinstance(node["right"], Mapping) else _ABSENT
        if literal is not _ABSENT and not isinstance(literal, (list, tuple)):
            raise ConfigError(f"{path}.right.literal", f"'{op}' needs a list, got {literal!r}")
        items: list[Any] = list(literal) if isinstance(literal, (list, tuple)) else []
        for index, item in enumerate(items):
            _same_kind(op, node["left"], {"literal": item}, f"{path}.right.literal[{index}]")
        negate = op == "notIn"
        return lambda run: _contains(right(run), left(run)) != negate
    _same_kind(op, node["left"], node["right"], f"{path}.right")
    compare = _COMPARISONS[op]
    return lambda run: _compare(compare, left(run), right(run))


def _kind(operand: Mapping[str, Any]) -> str | None:
    """`string`, `number` or `boolean` when known before any run is seen."""
    if "path" in operand:
        return PATH_KINDS.get(operand["path"])
    value = operand["literal"]
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string" if isinstance(value, str) else None


def _same_kind(op: str, left: Mapping[str, Any], right: Mapping[str, Any], path: str) -> None:
    kinds = _kind(left), _kind(right)
    if None not in kinds and kinds[0] != kinds[1]:
        shown = left.get("path", left.get("literal"))
        raise ConfigError(
            path,
            f"'{op}' compares {shown!r} (a {kinds[0]}) with {right.get('path', right.get('literal'))!r} "
            f"(a {kinds[1]}), which is never true",
        )


def _only(node: Mapping[str, Any], allowed: tuple[str, ...], path: str) -> None:
    extra = sorted(set(node) - set(allowed))
    if extra:
        raise ConfigError(f"{path}.{extra[0]}", f"unexpected key for op '{node.get('op')}'")


def _operand(node: Any, path: str) -> Callable[[AgentRun], Any]:
    if not isinstance(node, Mapping) or len(node) != 1 or not ({"path", "literal"} & set(node)):
        raise ConfigError(path, "an operand is {path: <run field>} or {literal: <value>}")
    if "literal" in node:
        value = node["literal"]
        return lambda run: value
    return path_getter(node["path"], f"{path}.path")


def _truthy(value: Any) -> bool:
    return value is not _ABSENT and bool(value)


def _compare(compare: Callable[[Any, Any], bool], left: Any, right: Any) -> bool:
    if left is _ABSENT or right is _ABSENT:
        return compare is operator.ne
    try:
        return bool(compare(left, right))
    except TypeError:
        return False


def _contains(container: Any, item: Any) -> bool:
    if item is _ABSENT or not isinstance(container, (list, tuple, set, frozenset)):
        return False
    return item in container
