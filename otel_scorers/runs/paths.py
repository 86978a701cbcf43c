"""Paths into a run (`agent.name`, `tool_calls.count`, `attributes.<key>`, ...): what filters,
sampling keys and rules read of a run, by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from otel_scorers.errors import ConfigError
from otel_scorers.model import AgentRun

#: What a path reads where the run has no such attribute (told apart from a `None` value).
ABSENT = object()

#: Every path a filter (or a sampling key) may read. `attributes.<key>` and `resource.<key>` read the run span's
#: attributes and resource; `model` is the first model the run used.
FIXED_PATHS: dict[str, Callable[[AgentRun], Any]] = {
    "agent.name": lambda run: run.agent_name,
    "model": lambda run: run.models[0] if run.models else None,
    "status": lambda run: run.status,
    "conversation.id": lambda run: run.conversation_id,
    "tool_calls.count": lambda run: len(run.tool_calls),
    "duration_ms": lambda run: run.duration_ms,
    "convention": lambda run: run.convention,
}
_PREFIX_PATHS = ("attributes.", "resource.")
#: What the fixed paths hold, so that a comparison with a literal of another kind (which could
#: never be true) is an error at load. Attributes and resource values may be of any kind.
PATH_KINDS = {
    "agent.name": "string",
    "model": "string",
    "status": "string",
    "conversation.id": "string",
    "tool_calls.count": "number",
    "duration_ms": "number",
    "convention": "string",
}


def path_getter(name: Any, path: str = "path") -> Callable[[AgentRun], Any]:
    """The reader of one path; an unknown path is an error naming it (at `path`) and the known ones."""
    if not isinstance(name, str):
        raise ConfigError(path, f"a path is a string, got {name!r}")
    getter = FIXED_PATHS.get(name)
    if getter is not None:
        return getter
    for prefix in _PREFIX_PATHS:
        if name.startswith(prefix) and len(name) > len(prefix):
            key = name[len(prefix) :]
            if prefix == "attributes.":
                return lambda run: run.attributes.get(key, ABSENT)
            return lambda run: run.resource.get(key, ABSENT)
    known = ", ".join([*FIXED_PATHS, "attributes.<key>", "resource.<key>"])
    raise ConfigError(path, f"unknown path {name!r}; known paths: {known}")
