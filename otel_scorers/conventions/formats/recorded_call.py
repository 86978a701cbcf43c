"""What a tracer that records a function's call by its parameters writes (MLflow's autolog,
OpenInference's decorators): the call's arguments, and the value it returned.

A call is recorded as its arguments by parameter name, so a function of `*args, **kwargs` is
`{"args": [...], "kwargs": {...}}` (either may be left out); its keyword arguments, when it was
given no positional ones, are the arguments the caller meant. A wrapper's own parameters may be
recorded beside them (smolagents' `Tool.__call__(*args, sanitize_inputs_outputs, **kwargs)`): the
keyword arguments it passes on are still the tool's. A value wrapped in an object of
one field (smolagents' `AgentText`, serialised by its fields) is recorded as `{"_value": ...}`;
a tool's value wrapped as `{"result": ...}` or `{"output": ...}` is read the same way, whichever
framework wrapped it.
"""

from __future__ import annotations

from typing import Any

from otel_scorers.conventions.formats.messages import is_mapping

#: The keys of a recorded `f(*args, **kwargs)` call.
CALL_KEYS = frozenset({"args", "kwargs"})
#: The field a one-value wrapper object is serialised with.
WRAPPED_VALUE = "_value"


def call_arguments(value: Any) -> Any:
    """The keyword arguments of a recorded `f(*args, **kwargs)` call given no positional ones
    (beside the wrapper's own parameters, when it was given some); any other value as it is."""
    if not is_mapping(value) or value.get("args"):
        return value
    kwargs = value.get("kwargs")
    if is_mapping(kwargs) and (kwargs or value.keys() <= CALL_KEYS):
        return dict(kwargs)
    return value


#: The fields of a one-field object a tracer or a framework's release wraps a returned value in:
#: smolagents' `AgentText`, and `{"result": ...}` / `{"output": ...}` (ADK's plain results, Genkit
#: Go's tools, and any release that starts wrapping what a tool returned).
WRAPPER_FIELDS = frozenset({WRAPPED_VALUE, "result", "output", "outputs"})


def first_argument(value: Any) -> Any:
    """The first positional argument of a recorded `f(*args, **kwargs)` call given any (a run's
    request recorded as `run(task)`'s call); any other value as it is."""
    if not is_mapping(value) or not value.keys() <= CALL_KEYS:
        return value
    positional = value.get("args")
    return positional[0] if isinstance(positional, list) and positional else value


def unwrapped(value: Any) -> Any:
    """The value a one-field wrapper object holds (`{"_value": ...}`, `{"result": ...}`,
    `{"output": ...}`); any other value as it is."""
    if is_mapping(value) and len(value) == 1 and not WRAPPER_FIELDS.isdisjoint(value):
        return next(iter(value.values()))
    return value
