"""An `AgentRun` read from its spans when first read, not when it is built.

Building a trace's runs finds each run's spans; a run is read from them when anything first
reads one of its fields, in two steps: what every scorer's skip decision and every evaluation
needs (ids, times, input, output, tool calls, `missing`, the agent, the handoffs, where the
texts came from: `ReadFields`), all at once, then the parts that only some scorers read
(messages, context, tool definitions, models, usage, the conversation id: `LaterParts`), all at
once. A run nothing reads is never read; one whose quick checks read only its answer and tool
calls never pays for the second step.

A built run is an `AgentRun`: the same fields, frozen, equal to a plain run of the same values,
copied and pickled as a plain one. Until a step is read its fields are properties; once read,
the run changes to a class without them, so that every later read of a field is the slot's own
(a property costs a Python call on each read). Made with `AgentRun`'s own constructor (as
`dataclasses.replace` does), it holds every field from the start."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from otel_scorers.model import AgentRun, ContextItem, Handoff, RunStatus, TokenUsage, ToolCall, ToolDefinition


@dataclass(frozen=True, slots=True)
class LaterParts:
    """The fields of a run read when first read, after its `ReadFields`."""

    input_messages: tuple[Mapping[str, Any], ...]
    output_messages: tuple[Mapping[str, Any], ...]
    models: tuple[str, ...]
    usage: TokenUsage
    conversation_id: str | None
    context: tuple[ContextItem, ...]
    tool_definitions: tuple[ToolDefinition, ...]


#: Reads a run's `LaterParts` from its spans.
ReadLater = Callable[[], LaterParts]


#: The fields of a run read when any of them is first read, in `READ_FIELDS`' order after how
#: to read its `LaterParts`: a plain tuple, made in a fraction of a named tuple's instructions
#: (whose constructor is a Python call) or a frozen dataclass's.
ReadFields = tuple[
    ReadLater,
    int,  # trace_id
    int,  # span_id
    int | None,  # parent_span_id
    str | None,  # agent_name
    str | None,  # input
    str | None,  # output
    tuple[ToolCall, ...],  # tool_calls
    int,  # start_ns
    int,  # end_ns
    RunStatus,  # status
    Mapping[str, Any],  # attributes
    Mapping[str, Any],  # resource
    str,  # convention
    frozenset[str],  # missing
    frozenset[str],  # unrecorded
    tuple[Handoff, ...],  # handoffs
    str | None,  # final_agent
    Mapping[str, str],  # text_sources
]
READ_FIELDS = (
    "trace_id",
    "span_id",
    "parent_span_id",
    "agent_name",
    "input",
    "output",
    "tool_calls",
    "start_ns",
    "end_ns",
    "status",
    "attributes",
    "resource",
    "convention",
    "missing",
    "unrecorded",
    "handoffs",
    "final_agent",
    "text_sources",
)
#: Reads a run's `ReadFields` from its spans.
ReadRun = Callable[[], ReadFields]
LATER_FIELDS = tuple(field.name for field in fields(LaterParts))
_FIELD_NAMES = tuple(field.name for field in fields(AgentRun))


class _BuiltRun(AgentRun):
    """What every built run is, whichever of its steps were read: equal to, and copied and
    pickled as, a plain `AgentRun` of the same fields."""

    __slots__ = ("_later", "_read")
    _read: ReadRun | None
    _later: ReadLater | None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AgentRun):
            return NotImplemented
        return _values(self) == _values(other)

    __hash__ = AgentRun.__hash__

    def __repr__(self) -> str:
        return repr(AgentRun(*_values(self)))

    def __reduce__(self) -> tuple[type[AgentRun], tuple[Any, ...]]:
        return AgentRun, _values(self)


class LazyRun(_BuiltRun):
    """A built run nothing has read yet: its `READ_FIELDS` and `LATER_FIELDS` are read on first
    read (see the module's docstring)."""

    __slots__ = ()


class _ReadRun(_BuiltRun):
    """A built run whose `READ_FIELDS` were read; its `LATER_FIELDS` are read on first read."""

    __slots__ = ()


class _FilledRun(_BuiltRun):
    """A built run whose every field was read: each is its slot."""

    __slots__ = ()


def _values(run: AgentRun) -> tuple[Any, ...]:
    return tuple(getattr(run, name) for name in _FIELD_NAMES)


#: `AgentRun`'s own slots, where a built run keeps its values too.
_SLOTS: dict[str, Any] = {name: AgentRun.__dict__[name] for name in _FIELD_NAMES}
_SET_TRACE_ID = _SLOTS["trace_id"].__set__
_SET_SPAN_ID = _SLOTS["span_id"].__set__
_SET_PARENT_SPAN_ID = _SLOTS["parent_span_id"].__set__
_SET_AGENT_NAME = _SLOTS["agent_name"].__set__
_SET_INPUT = _SLOTS["input"].__set__
_SET_OUTPUT = _SLOTS["output"].__set__
_SET_TOOL_CALLS = _SLOTS["tool_calls"].__set__
_SET_START_NS = _SLOTS["start_ns"].__set__
_SET_END_NS = _SLOTS["end_ns"].__set__
_SET_STATUS = _SLOTS["status"].__set__
_SET_ATTRIBUTES = _SLOTS["attributes"].__set__
_SET_RESOURCE = _SLOTS["resource"].__set__
_SET_CONVENTION = _SLOTS["convention"].__set__
_SET_MISSING = _SLOTS["missing"].__set__
_SET_UNRECORDED = _SLOTS["unrecorded"].__set__
_SET_HANDOFFS = _SLOTS["handoffs"].__set__
_SET_FINAL_AGENT = _SLOTS["final_agent"].__set__
_SET_TEXT_SOURCES = _SLOTS["text_sources"].__set__
_LATER_SETTERS = tuple(_SLOTS[name].__set__ for name in LATER_FIELDS)
_SET_READ: Callable[[_BuiltRun, ReadRun | None], None] = _BuiltRun.__dict__["_read"].__set__
_SET_LATER: Callable[[_BuiltRun, ReadLater | None], None] = _BuiltRun.__dict__["_later"].__set__
_GET_READ: Callable[[_BuiltRun, type], ReadRun | None] = _BuiltRun.__dict__["_read"].__get__
_GET_LATER: Callable[[_BuiltRun, type], ReadLater | None] = _BuiltRun.__dict__["_later"].__get__


def _read_fields(run: _BuiltRun) -> None:
    """The run's `READ_FIELDS` read, once (another thread may have read them first)."""
    read = _GET_READ(run, _BuiltRun)
    if read is None:
        return
    (
        later,
        trace_id,
        span_id,
        parent_span_id,
        agent_name,
        input,
        output,
        tool_calls,
        start_ns,
        end_ns,
        status,
        attributes,
        resource,
        convention,
        missing,
        unrecorded,
        handoffs,
        final_agent,
        text_sources,
    ) = read()
    # Each field through its slot's own setter, named (a loop over them costs twice as much):
    # the frozen dataclass refuses `setattr`, and `object.__setattr__` costs a third more.
    _SET_TRACE_ID(run, trace_id)
    _SET_SPAN_ID(run, span_id)
    _SET_PARENT_SPAN_ID(run, parent_span_id)
    _SET_AGENT_NAME(run, agent_name)
    _SET_INPUT(run, input)
    _SET_OUTPUT(run, output)
    _SET_TOOL_CALLS(run, tool_calls)
    _SET_START_NS(run, start_ns)
    _SET_END_NS(run, end_ns)
    _SET_STATUS(run, status)
    _SET_ATTRIBUTES(run, attributes)
    _SET_RESOURCE(run, resource)
    _SET_CONVENTION(run, convention)
    _SET_MISSING(run, missing)
    _SET_UNRECORDED(run, unrecorded)
    _SET_HANDOFFS(run, handoffs)
    _SET_FINAL_AGENT(run, final_agent)
    _SET_TEXT_SOURCES(run, text_sources)
    _SET_LATER(run, later)
    _SET_READ(run, None)  # what it read from is let go
    object.__setattr__(run, "__class__", _ReadRun)


def _read_later(run: _BuiltRun) -> None:
    """The run's `LATER_FIELDS` read, once, after its `READ_FIELDS`."""
    _read_fields(run)
    later = _GET_LATER(run, _BuiltRun)
    if later is None:  # another thread read them first: every field is set
        return
    parts = later()
    for setter, name in zip(_LATER_SETTERS, LATER_FIELDS, strict=True):
        setter(run, getattr(parts, name))
    _SET_LATER(run, None)  # the spans are let go
    object.__setattr__(run, "__class__", _FilledRun)


def _on_first_read(name: str, fill: Callable[[_BuiltRun], None]) -> property:
    slot = _SLOTS[name]

    def read(run: _BuiltRun) -> Any:
        # Only a run not read yet has these properties (or one read by another thread at this
        # moment: `fill` then finds nothing to read): no AttributeError raised to find out.
        fill(run)
        return slot.__get__(run, AgentRun)

    def write(run: _BuiltRun, value: Any) -> None:
        # `AgentRun.__init__` (`dataclasses.replace`) making a whole run: it holds every field,
        # which the rest of its fields go straight into.
        slot.__set__(run, value)
        object.__setattr__(run, "__class__", _FilledRun)

    return property(read, write, doc=f"`AgentRun.{name}`, read from the run's spans on first read.")


for _name in READ_FIELDS:
    setattr(LazyRun, _name, _on_first_read(_name, _read_fields))
for _name in LATER_FIELDS:
    setattr(LazyRun, _name, _on_first_read(_name, _read_later))
    setattr(_ReadRun, _name, _on_first_read(_name, _read_later))


def lazy_run(read: ReadRun) -> AgentRun:
    """A run whose `READ_FIELDS` `read` reads when one is first read, and whose `LATER_FIELDS`
    what that gives reads when one of them is."""
    run = object.__new__(LazyRun)
    _SET_READ(run, read)  # `_later` is set when `read` is read
    return run
