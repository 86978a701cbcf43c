"""An `AgentRun` whose costlier parts are read from its spans when first read (`LaterParts`).

Building a run reads what every scorer's skip decision and every evaluation needs (input,
output, tool calls, `missing`); the parts that only some scorers read (messages, context, tool
definitions, models, usage, the conversation id) are read from the run's spans the first time
anything reads one of them, all at once, and then held like any other field. A run whose quick
checks read only its answer and tool calls never pays for them.

`LazyRun` is an `AgentRun`: the same fields, frozen, equal to a plain run of the same values,
copied and pickled as a plain one. Made with `AgentRun`'s own constructor (as
`dataclasses.replace` does), it holds every field from the start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from otel_scorers.model import AgentRun, ContextItem, Handoff, RunStatus, TokenUsage, ToolCall, ToolDefinition


@dataclass(frozen=True, slots=True)
class LaterParts:
    """The fields of a run read when first read, not when it is built."""

    input_messages: tuple[Mapping[str, Any], ...]
    output_messages: tuple[Mapping[str, Any], ...]
    models: tuple[str, ...]
    usage: TokenUsage
    conversation_id: str | None
    context: tuple[ContextItem, ...]
    tool_definitions: tuple[ToolDefinition, ...]


#: Reads a run's `LaterParts` from its spans.
ReadLater = Callable[[], LaterParts]
LATER_FIELDS = tuple(field.name for field in fields(LaterParts))
_FIELD_NAMES = tuple(field.name for field in fields(AgentRun))


class LazyRun(AgentRun):
    """A built run; its `LATER_FIELDS` are read on first read (see the module's docstring)."""

    __slots__ = ("_later",)
    _later: ReadLater | None

    def _fill(self) -> None:
        later = self._later
        if later is None:  # another thread read them first: every field is set
            return
        parts = later()
        for name in LATER_FIELDS:
            _SLOTS[name].__set__(self, getattr(parts, name))
        object.__setattr__(self, "_later", None)  # the spans are let go

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AgentRun):
            return NotImplemented
        return _values(self) == _values(other)

    __hash__ = AgentRun.__hash__

    def __repr__(self) -> str:
        return repr(AgentRun(*_values(self)))

    def __reduce__(self) -> tuple[type[AgentRun], tuple[Any, ...]]:
        return AgentRun, _values(self)


def _values(run: AgentRun) -> tuple[Any, ...]:
    return tuple(getattr(run, name) for name in _FIELD_NAMES)


#: `AgentRun`'s own slots, where a `LazyRun` keeps its values too.
_SLOTS: dict[str, Any] = {name: AgentRun.__dict__[name] for name in LATER_FIELDS}


def _read_later(name: str) -> property:
    slot = _SLOTS[name]

    def read(run: LazyRun) -> Any:
        try:
            return slot.__get__(run, AgentRun)
        except AttributeError:  # not read yet
            run._fill()
            return slot.__get__(run, AgentRun)

    def write(run: LazyRun, value: Any) -> None:  # `AgentRun.__init__`, for a whole run
        slot.__set__(run, value)

    return property(read, write, doc=f"`AgentRun.{name}`, read from the run's spans on first read.")


for _name in LATER_FIELDS:
    setattr(LazyRun, _name, _read_later(_name))


#: Each slot's setter, for the fields `lazy_run` sets when it makes a run.
_SET: dict[str, Callable[[AgentRun, Any], None]] = {
    name: AgentRun.__dict__[name].__set__ for name in _FIELD_NAMES if name not in LATER_FIELDS
}
_SET_LATER: Callable[[LazyRun, ReadLater | None], None] = LazyRun.__dict__["_later"].__set__


def lazy_run(
    later: ReadLater,
    *,
    trace_id: int,
    span_id: int,
    parent_span_id: int | None,
    agent_name: str | None,
    input: str | None,
    output: str | None,
    tool_calls: tuple[ToolCall, ...],
    start_ns: int,
    end_ns: int,
    status: RunStatus,
    attributes: Mapping[str, Any],
    resource: Mapping[str, Any],
    convention: str,
    missing: frozenset[str],
    unrecorded: frozenset[str],
    handoffs: tuple[Handoff, ...],
    final_agent: str | None,
    text_sources: Mapping[str, str],
) -> AgentRun:
    """A run with these fields, its `LATER_FIELDS` read by `later` when one is first read."""
    run = object.__new__(LazyRun)
    # The frozen dataclass refuses `setattr`: each field goes into its slot through the slot's
    # own setter, a third cheaper than `object.__setattr__` (which `AgentRun.__init__` uses).
    _SET_LATER(run, later)
    _SET["trace_id"](run, trace_id)
    _SET["span_id"](run, span_id)
    _SET["parent_span_id"](run, parent_span_id)
    _SET["agent_name"](run, agent_name)
    _SET["input"](run, input)
    _SET["output"](run, output)
    _SET["tool_calls"](run, tool_calls)
    _SET["start_ns"](run, start_ns)
    _SET["end_ns"](run, end_ns)
    _SET["status"](run, status)
    _SET["attributes"](run, attributes)
    _SET["resource"](run, resource)
    _SET["convention"](run, convention)
    _SET["missing"](run, missing)
    _SET["unrecorded"](run, unrecorded)
    _SET["handoffs"](run, handoffs)
    _SET["final_agent"](run, final_agent)
    _SET["text_sources"](run, text_sources)
    return run
