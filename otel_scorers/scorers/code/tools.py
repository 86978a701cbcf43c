"""`tool_call_accuracy` and `trajectory_accuracy`: the run's tool calls against what was expected."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.checks import Check
from otel_scorers.scorers.rounding import round2

Ordering = Literal["strict", "relaxed", "unordered"]


def _calls(names: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(names[:limit]) + (f", … ({len(names)} in all)" if len(names) > limit else "")
    return shown or "none"


def tool_call_accuracy(
    expected_tool: str | None = None, *, expected_order: Sequence[str] | None = None, strict: bool = False
) -> Check:
    """1 if the calls match: `expected_order` (strict: exactly; else each name's first call, in
    that order), or else `expected_tool` (strict: the one and only call; else any call). 0 without calls."""
    if not expected_tool and not expected_order:
        raise ValueError("tool_call_accuracy needs expected_tool or expected_order")
    order = tuple(expected_order or ())

    def score(run: AgentRun) -> Score:
        names = run.tool_names
        if not names:
            return Score("tool_call_accuracy", value=0.0, reason="no tool calls")
        if order:
            if strict:
                passed = tuple(names) == order
                why = "the calls are exactly" if passed else "the calls are not exactly"
                reason = f"{why} {' → '.join(order)}; calls: {_calls(names)}"
            else:
                passed, reason = _first_calls_in_order(names, order)
        elif strict:
            passed = names == [expected_tool]
            reason = (
                f"{expected_tool} was the only call"
                if passed
                else f"wanted {expected_tool} as the only call; calls: {_calls(names)}"
            )
        else:
            passed = expected_tool in names
            reason = f"{expected_tool} {'called' if passed else 'not called'}; calls: {_calls(names)}"
        return Score("tool_call_accuracy", value=1.0 if passed else 0.0, reason=reason)

    return Check(
        "tool_call_accuracy",
        score,
        args={"expected_tool": expected_tool, "expected_order": list(order) or None, "strict": strict},
    )


def _first_calls_in_order(names: list[str], order: Sequence[str]) -> tuple[bool, str]:
    previous = -1
    for step, wanted in enumerate(order):
        if wanted not in names:
            return False, f"{wanted} (step {step + 1} of {len(order)}) not called; calls: {_calls(names)}"
        first = names.index(wanted)
        if first <= previous:
            return False, f"{wanted} first called before {order[step - 1]}; calls: {_calls(names)}"
        previous = first
    return True, f"first calls follow {' → '.join(order)}"


def trajectory_accuracy(
    expected: Sequence[str], *, ordering: Ordering = "relaxed", allow_repeated: bool = True
) -> Check:
    """Share of the expected steps the calls match (strict: position by position, extra calls
    cost half their share; relaxed: in order; unordered: anywhere), less 0.1 per tool called
    more than once unless `allow_repeated`; clamped to [0, 1] and round2."""
    if ordering not in ("strict", "relaxed", "unordered"):
        raise ValueError(
            f"trajectory_accuracy: ordering must be strict, relaxed or unordered, not {ordering!r}"
        )
    steps = tuple(expected)

    def score(run: AgentRun) -> Score:
        names = run.tool_names
        if not steps:
            passed = not names
            reason = (
                "no steps expected and none taken" if passed else f"no steps expected; calls: {_calls(names)}"
            )
            return Score("trajectory_accuracy", value=1.0 if passed else 0.0, reason=reason)
        matched, missing = _match(names, steps, ordering)
        value = matched / len(steps)
        notes = [f"{matched} of {len(steps)} expected steps matched ({ordering})"]
        if ordering == "strict" and len(names) > len(steps):
            value -= 0.5 * (len(names) - len(steps)) / len(steps)
            notes.append(f"{len(names) - len(steps)} extra calls")
        if missing:
            notes.append(f"missing or out of order: {_calls(missing)}")
        if not allow_repeated:
            repeated = sorted(name for name, count in Counter(names).items() if count > 1)
            value -= 0.1 * len(repeated)
            if repeated:
                notes.append(f"repeated: {', '.join(repeated)}")
        return Score("trajectory_accuracy", value=round2(min(1.0, max(0.0, value))), reason="; ".join(notes))

    return Check(
        "trajectory_accuracy",
        score,
        binary=False,
        args={"expected": list(steps), "ordering": ordering, "allow_repeated": allow_repeated},
    )


def _match(names: list[str], steps: Sequence[str], ordering: Ordering) -> tuple[int, list[str]]:
    """How many expected steps the calls match, and the expected steps they do not."""
    missing: list[str] = []
    if ordering == "strict":
        for index, step in enumerate(steps):
            if index >= len(names) or names[index] != step:
                missing.append(step)
    elif ordering == "relaxed":
        position = 0
        for step in steps:
            found = next((i for i in range(position, len(names)) if names[i] == step), None)
            if found is None:
                missing.append(step)
            else:
                position = found + 1
    else:
        unused = Counter(names)
        for step in steps:
            if unused[step]:
                unused[step] -= 1
            else:
                missing.append(step)
    return len(steps) - len(missing), missing
