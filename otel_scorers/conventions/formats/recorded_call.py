"""What a tracer that records a function's call by its parameters writes (MLflow's autolog,
OpenInference's decorators): the call's arguments, and the value it returned.

A call is recorded as its arguments by parameter name, so a function of `*args, **kwargs` is
`{"args": [...], "kwargs": {...}}` (either may be left out); its keyword arguments, when it was
given no positional ones, are the arguments the caller meant. A value wrapped in an object of
one field (smolagents' `AgentText`, serialised by its fields) is recorded as `{"_value": ...}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The keys of a recorded `f(*args, **kwargs)` call.
CALL_KEYS = frozenset({"args", "kwargs"})
#: The field a one-value wrapper object is serialised with.
WRAPPED_VALUE = "_value"


def call_arguments(value: Any) -> Any:
    """The keyword arguments of a recorded `f(*args, **kwargs)` call given no positional ones;
    any other value as it is."""
    if (
        isinstance(value, Mapping)
        and value.keys() <= CALL_KEYS
        and isinstance(value.get("kwargs"), Mapping)
        and not value.get("args")
    ):
        return dict(value["kwargs"])
    return value


def unwrapped(value: Any) -> Any:
    """The value a one-field wrapper object holds (`{"_value": ...}`); any other value as it is."""
    if isinstance(value, Mapping) and len(value) == 1 and WRAPPED_VALUE in value:
        return value[WRAPPED_VALUE]
    return value
