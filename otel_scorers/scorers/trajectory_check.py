"""`trajectory`: the run's tool calls against an expected list, in the match modes agent evaluation
uses (`strict`, `unordered`, `subset`, `superset`), names and optionally arguments compared.
Semantics: docs/checks.md, "Trajectories"."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from otel_scorers.model import AgentRun, Score, ToolCall
from otel_scorers.scorers.quick_check import Check

Mode = Literal["strict", "unordered", "subset", "superset"]
ArgumentMatch = Literal["exact", "subset", "ignore"]
_NEEDS = frozenset({"tool_calls"})
_NEEDS_ARGUMENTS = frozenset({"tool_calls", "tool_arguments"})
_MISSING = object()


@dataclass(frozen=True, slots=True)
class Step:
    """One expected call: a tool name, and the arguments to compare when given."""

    name: str
    arguments: Mapping[str, Any] | None = None


def _steps(expected: Sequence[str | Mapping[str, Any]]) -> tuple[Step, ...]:
    steps = []
    for index, entry in enumerate(expected):
        if isinstance(entry, str):
            steps.append(Step(entry))
            continue
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            raise ValueError(f"expected[{index}] must be a tool name or {{name, arguments}}, got {entry!r}")
        unknown = set(entry) - {"name", "arguments"}
        if unknown:
            raise ValueError(
                f"expected[{index}] has unknown key(s) {', '.join(sorted(unknown))}; use name, arguments"
            )
        arguments = entry.get("arguments")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise ValueError(f"expected[{index}].arguments must be a mapping, got {arguments!r}")
        steps.append(Step(entry["name"], arguments))
    return tuple(steps)


def _arguments(call: ToolCall) -> Mapping[str, Any] | None:
    """The call's arguments as a mapping: `null` is none (`{}`); text that is not an object is
    not comparable (None)."""
    if call.arguments is None:
        return {}
    return call.arguments if isinstance(call.arguments, Mapping) else None


def _argument_difference(step: Step, call: ToolCall, how: ArgumentMatch) -> str | None:
    """Why the call's arguments do not match the step's, or None when they do."""
    if how == "ignore" or step.arguments is None:
        return None
    actual = _arguments(call)
    if actual is None:
        return f"arguments {call.arguments!r} are not an object"
    if how == "exact" and set(actual) != set(step.arguments):
        extra = sorted(set(actual) - set(step.arguments))
        lacking = sorted(set(step.arguments) - set(actual))
        return f"arguments {'lack ' + ', '.join(lacking) if lacking else 'also have ' + ', '.join(extra)}"
    for key, wanted in step.arguments.items():
        got = actual.get(key, _MISSING)
        if got is _MISSING:
            return f"arguments lack {key}"
        if not _equal(got, wanted):
            return f"argument {key} is {_short(got)}, expected {_short(wanted)}"
    return None


def _equal(first: Any, second: Any) -> bool:
    """JSON equality: 1 equals 1.0, true does not equal 1."""
    if isinstance(first, bool) or isinstance(second, bool):
        return isinstance(first, bool) and isinstance(second, bool) and first == second
    if isinstance(first, Mapping) and isinstance(second, Mapping):
        return set(first) == set(second) and all(_equal(first[key], second[key]) for key in first)
    if isinstance(first, (list, tuple)) and isinstance(second, (list, tuple)):
        return len(first) == len(second) and all(_equal(a, b) for a, b in zip(first, second, strict=True))
    return bool(first == second)


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _matches(step: Step, call: ToolCall, how: ArgumentMatch) -> bool:
    return step.name == call.name and _argument_difference(step, call, how) is None


def _pairing(steps: Sequence[Step], calls: Sequence[ToolCall], how: ArgumentMatch) -> list[int | None]:
    """For each step, the call it is paired with (None when none is left): a largest matching
    (augmenting paths), so that a call matching several steps never hides a pairing that exists."""
    paired_call: list[int | None] = [None] * len(steps)
    paired_step: list[int | None] = [None] * len(calls)
    options = [[index for index, call in enumerate(calls) if _matches(step, call, how)] for step in steps]

    def augment(step: int, seen: set[int]) -> bool:
        for call in options[step]:
            if call in seen:
                continue
            seen.add(call)
            holder = paired_step[call]
            if holder is None or augment(holder, seen):
                paired_call[step] = call
                paired_step[call] = step
                return True
        return False

    for step in range(len(steps)):
        augment(step, set())
    return paired_call


def _names(calls: Sequence[ToolCall], limit: int = 8) -> str:
    names = [call.name for call in calls[:limit]]
    more = f", … ({len(calls)} in all)" if len(calls) > limit else ""
    return (", ".join(names) + more) if names else "none"


def _strict(steps: Sequence[Step], calls: Sequence[ToolCall], how: ArgumentMatch) -> str | None:
    for number, (step, call) in enumerate(zip(steps, calls, strict=False), 1):
        if step.name != call.name:
            return f"call {number} is {call.name}, expected {step.name}"
        difference = _argument_difference(step, call, how)
        if difference is not None:
            return f"call {number} {call.name}: {difference}"
    if len(calls) < len(steps):
        missing = steps[len(calls)]
        return f"{len(calls)} calls, expected {len(steps)}: {missing.name} (step {len(calls) + 1}) not called"
    if len(calls) > len(steps):
        return f"{len(calls)} calls, expected {len(steps)}: call {len(steps) + 1} {calls[len(steps)].name} not expected"
    return None


def _unmatched_step(
    steps: Sequence[Step], calls: Sequence[ToolCall], pairing: list[int | None], how: ArgumentMatch
) -> str | None:
    for number, (step, call) in enumerate(zip(steps, pairing, strict=True), 1):
        if call is None:
            same_name = [each for each in calls if each.name == step.name]
            if same_name and step.arguments is not None and how != "ignore":
                difference = _argument_difference(step, same_name[0], how)
                return f"{step.name} (step {number}) not called with the expected arguments: {difference}"
            return f"{step.name} (step {number}) expected but not called"
    return None


def _unmatched_call(calls: Sequence[ToolCall], pairing: list[int | None]) -> str | None:
    used = {call for call in pairing if call is not None}
    for number, call in enumerate(calls, 1):
        if number - 1 not in used:
            return f"call {number} {call.name} not expected"
    return None


def _unmatched_by_name(steps: Sequence[Step], calls: Sequence[ToolCall], mode: Mode) -> str | None:
    """`_unmatched_step` and `_unmatched_call` when only names are compared: pairing by name
    pairs each step with the first calls of its name, so counting gives the same differences."""
    if mode in ("unordered", "superset"):
        made = Counter(call.name for call in calls)
        for number, step in enumerate(steps, 1):
            if made[step.name] == 0:
                return f"{step.name} (step {number}) expected but not called"
            made[step.name] -= 1
    if mode in ("unordered", "subset"):
        wanted = Counter(step.name for step in steps)
        for number, call in enumerate(calls, 1):
            if wanted[call.name] == 0:
                return f"call {number} {call.name} not expected"
            wanted[call.name] -= 1
    return None


def trajectory(
    expected: Sequence[str | Mapping[str, Any]],
    *,
    mode: Mode = "strict",
    arguments: ArgumentMatch = "ignore",
) -> Check:
    """1 if the run's tool calls match `expected` (tool names, or `{name, arguments}`) in `mode`:
    `strict` the same calls in the same order; `unordered` the same calls in any order; `subset`
    every call is an expected one (no other tools, none more often than expected); `superset`
    every expected call was made (others may be too). `arguments`: `exact` (the same keys and
    values), `subset` (the expected keys with the expected values; others allowed) or `ignore`;
    a step given by name alone matches any arguments. The reason is the first difference."""
    if mode not in ("strict", "unordered", "subset", "superset"):
        raise ValueError(f"mode must be strict, unordered, subset or superset, got {mode!r}")
    if arguments not in ("exact", "subset", "ignore"):
        raise ValueError(f"arguments must be exact, subset or ignore, got {arguments!r}")
    steps = _steps(expected)
    compares_arguments = arguments != "ignore" and any(step.arguments is not None for step in steps)
    shown = " → ".join(step.name for step in steps) or "no calls"

    def score(run: AgentRun) -> Score:
        calls = run.tool_calls
        if mode == "strict":
            difference = _strict(steps, calls, arguments)
        elif not compares_arguments:
            difference = _unmatched_by_name(steps, calls, mode)
        else:
            pairing = _pairing(steps, calls, arguments)
            difference = None
            if mode in ("unordered", "superset"):
                difference = _unmatched_step(steps, calls, pairing, arguments)
            if difference is None and mode in ("unordered", "subset"):
                difference = _unmatched_call(calls, pairing)
        if difference is None:
            return Score("trajectory", value=1.0, reason=f"calls match {shown} ({mode})")
        return Score("trajectory", value=0.0, reason=f"{difference}; calls: {_names(calls)}")

    return Check(
        "trajectory",
        score,
        _NEEDS_ARGUMENTS if compares_arguments else _NEEDS,
        args={"expected": [_plain(step) for step in steps], "mode": mode, "arguments": arguments},
    )


def _plain(step: Step) -> Any:
    return step.name if step.arguments is None else {"name": step.name, "arguments": dict(step.arguments)}
