"""Arguments a framework, not the model, put in a tool call's recorded arguments.

Arguments the framework adds to every call, null unless set (`Framework.added_arguments`:
Semantic Kernel's `instructions_override`), are not the model's.

An instrumentation that records the bound arguments of the method a framework calls its tools
through writes that method's own parameters beside the tool's (smolagents'
`Tool.__call__(*args, sanitize_inputs_outputs=False, **kwargs)`: `{"args": {}, "city": "Paris",
"sanitize_inputs_outputs": true}`). They are not the tool's arguments, and a call recorded so is
the framework's whatever its scope (`Framework.call_parameters`).
"""

from __future__ import annotations

from typing import Any, TypeGuard

#: Where a recorded method keeps its positional arguments, and what it holds when given none.
_POSITIONAL = "args"
_NO_POSITIONAL: tuple[Any, ...] = ({}, [], None)


def calls_with(arguments: Any, parameters: frozenset[str]) -> TypeGuard[dict[str, Any]]:
    """The call's arguments (decoded JSON: a dict) are the method's bound arguments written flat:
    its positional `args` beside one of its `parameters` (a record that keeps the keyword
    arguments apart, `{"kwargs": {...}}`, is read as such a record is)."""
    return (
        bool(parameters)
        and isinstance(arguments, dict)
        and _POSITIONAL in arguments
        and not parameters.isdisjoint(arguments)
    )


def adds_to(arguments: Any, added: frozenset[str]) -> TypeGuard[dict[str, Any]]:
    """The call's arguments (decoded JSON: a dict) hold one the framework added, left unset (null)."""
    if not added or not isinstance(arguments, dict) or added.isdisjoint(arguments):
        return False
    return any(key in arguments and arguments[key] is None for key in added)


def without_framework_arguments(
    arguments: dict[str, Any], added: frozenset[str], parameters: frozenset[str]
) -> dict[str, Any]:
    """The tool's own arguments: those the framework added left unset, its method's `parameters`,
    and the method's positional arguments when it has parameters and was given none, left out."""
    return {
        key: value
        for key, value in arguments.items()
        if not (key in added and value is None)
        and key not in parameters
        and not (parameters and key == _POSITIONAL and value in _NO_POSITIONAL)
    }
