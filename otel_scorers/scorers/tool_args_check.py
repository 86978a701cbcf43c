"""`tool_args_valid`: every tool call's arguments match the parameter schema its tool declares,
read from the trace (`AgentRun.tool_definitions`) or given in the configuration. Semantics:
docs/checks.md, "Tool arguments against their schemas"."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from otel_scorers.model import AgentRun, Score, ScoreError, ToolCall, ToolDefinition
from otel_scorers.scorers.bounded_schema import (
    SchemaCheck,
    TooLarge,
    Unresolvable,
    parse_document,
    schema_check,
)
from otel_scorers.scorers.offloaded_check import OffloadedCheck, text_size
from otel_scorers.scorers.quick_check import DEFAULT_REGEX_TIMEOUT_S, Check

_NEEDS = frozenset({"tool_calls", "tool_arguments"})
#: Trace-declared schemas whose validators are kept (each run of an agent declares the same ones).
_MAX_REMEMBERED = 256
_NO_DECLARATIONS = (
    "the trace declares no tool schemas (gen_ai.tool.definitions, llm.tools, ai.prompt.tools) "
    "and none are given (tools:)"
)


def _listing(names: list[str], limit: int = 6) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", … ({len(names)} in all)" if len(names) > limit else "")


def tool_args_valid(
    tools: Mapping[str, Mapping[str, Any] | bool] | None = None,
    *,
    timeout_s: float = DEFAULT_REGEX_TIMEOUT_S,
) -> OffloadedCheck:
    """1 if every tool call's arguments match its tool's declared parameter schema; a call of a
    tool the run did not declare fails. `tools` (name -> JSON Schema) adds to, and overrides,
    what the trace declares. Skipped when nothing declares a schema for the tools called."""
    given: dict[str, SchemaCheck] = {
        name: schema_check(schema, f"tools.{name}") for name, schema in (tools or {}).items()
    }
    declared = _declared_schemas()

    def score(run: AgentRun) -> Score:
        calls = run.tool_calls
        if not calls:
            return Score("tool_args_valid", value=1.0, reason="no tool calls")
        from_trace = {tool.name: tool for tool in run.tool_definitions}
        if not given and not from_trace:
            return Score("tool_args_valid", skipped=_NO_DECLARATIONS)
        violations: list[str] = []
        unchecked: list[str] = []
        checked = 0
        for number, call in enumerate(calls, 1):
            label = f"call {number} {call.name}"
            checker: SchemaCheck | str | None = given.get(call.name)
            if checker is None:
                checker = _trace_checker(from_trace.get(call.name), declared)
            if checker is None:
                names = sorted({*given, *from_trace})
                violations.append(f"{label}: tool not declared (declared: {_listing(names)})")
                continue
            if isinstance(checker, str):
                unchecked.append(f"{call.name} ({checker})")
                continue
            try:
                problems = _problems(checker, call, timeout_s)
            except Unresolvable as exc:
                unchecked.append(f"{call.name} ({exc})")
                continue
            except TooLarge as exc:
                return Score(
                    "tool_args_valid",
                    error=ScoreError("too_large", f"{label}: arguments not checked: {exc}"),
                )
            checked += 1
            if problems:
                violations.append(f"{label}: {problems}")
        return _outcome(checked, unchecked, violations)

    check = Check(
        "tool_args_valid",
        score,
        _NEEDS,
        args={"tools": dict(tools) if tools is not None else None},
        retime=lambda limit: tool_args_valid(tools, timeout_s=min(limit, timeout_s)).check,
    )
    return OffloadedCheck(check, _arguments_size)


def _arguments_size(run: AgentRun) -> int:
    """Characters of tool arguments there are to check (`offloaded_check`)."""
    return sum(text_size(call.arguments) for call in run.tool_calls)


def _trace_checker(
    definition: ToolDefinition | None, declared: Callable[[ToolDefinition], SchemaCheck | str]
) -> SchemaCheck | str | None:
    """How the trace's declaration of a tool checks its calls: a check, why there is none (a
    string), or None when the trace does not declare the tool."""
    if definition is None:
        return None
    if definition.parameters is None:
        return "declared without a schema"
    return declared(definition)


def _declared_schemas() -> Callable[[ToolDefinition], SchemaCheck | str]:
    """The check of a trace's declared schema, or why there is none, made once per declaration:
    the same object for every run that declared the same tools, at most `_MAX_REMEMBERED` kept."""
    # (the definition, so its id stays its own, and its check or why none)
    remembered: dict[int, tuple[ToolDefinition, SchemaCheck | str]] = {}

    def declared(definition: ToolDefinition) -> SchemaCheck | str:
        known = remembered.get(id(definition))
        if known is not None and known[0] is definition:
            return known[1]
        try:
            found: SchemaCheck | str = schema_check(
                definition.parameters, f"{definition.name}'s declared schema"
            )
        except ValueError as exc:
            found = str(exc)
        if len(remembered) >= _MAX_REMEMBERED:
            remembered.clear()
        remembered[id(definition)] = (definition, found)
        return found

    return declared


def _outcome(checked: int, unchecked: list[str], violations: list[str]) -> Score:
    """The score once every call is looked at: 0 on a violation, skipped when no call could be
    checked, else 1, each with what was not checked."""
    details = {"checked": checked, "unchecked": unchecked, "violations": violations}
    if violations:
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        return Score("tool_args_valid", value=0.0, reason=violations[0] + more, details=details)
    if not checked:
        return Score(
            "tool_args_valid",
            skipped=f"no schema to check the calls against: {_listing(unchecked, 3)}",
            details=details,
        )
    note = f"; not checked: {_listing(unchecked, 3)}" if unchecked else ""
    matched = "1 tool call matches its" if checked == 1 else f"{checked} tool calls match their"
    return Score("tool_args_valid", value=1.0, reason=f"{matched} declared schema{note}", details=details)


def _problems(checker: SchemaCheck, call: ToolCall, timeout_s: float) -> str | None:
    """What is wrong with the call's arguments, or None. `null` arguments are no arguments (`{}`);
    arguments the trace kept as text are read as JSON."""
    arguments = call.arguments
    if arguments is None:
        arguments = {}
    elif isinstance(arguments, str):
        try:
            arguments = parse_document(arguments)
        except TooLarge:
            raise
        except ValueError:
            shown = arguments if len(arguments) <= 40 else arguments[:39] + "…"
            return f"arguments are not JSON ({shown!r})"
    violations = checker.violations(arguments, timeout_s)
    return "; ".join(violations) if violations else None
