"""An instrumentation described in configuration (`conventions:`), validated like the rest of it.

A description names which spans it reads (their instrumentation scope and/or an attribute they
carry), which of them is an agent run, a tool call, a model call or a handoff (`when`: attribute
values, a span-name prefix), and where each part of the run is read (`Source`: an attribute, a
span event's attribute, the span's name; a JSON path into the value). `DescribedConvention`
(`described.py`) is the reader it makes. Shipped descriptions (`descriptions/*.yaml`) are written
in the same format.

    conventions:
      - name: acme
        scope: acme.agents
        run:   {when: {attributes: {acme.kind: agent}}, agent_name: acme.agent, input: acme.input,
                output: acme.output, conversation_id: acme.session}
        tool:  {when: {attributes: {acme.kind: tool}}, name: acme.tool,
                arguments: acme.args, result: {attribute: acme.result, path: value}}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

_STRICT = ConfigDict(extra="forbid", frozen=True)

#: Attribute values a `when` accepts; `ANY_VALUE` accepts any value the attribute has.
Value = str | int | bool
ANY_VALUE = "*"

_STEP = re.compile(r"""\.?([^.\[\]]+)|\[(-?\d+)\]|\[["']([^"']+)["']\]""")


#: A list index in a path has at most this many digits: no attribute holds a list longer, and
#: Python reads no more than 4,300 digits as a number (its error would say nothing of the path).
MAX_INDEX_DIGITS = 9


def path_index(digits: str, path: str) -> int:
    """A path's list index as a number; a ValueError naming the path when it has too many digits."""
    count = len(digits.lstrip("-"))
    if count > MAX_INDEX_DIGITS:
        shown = repr(path) if len(path) <= 60 else f"{path[:60]!r}..."
        raise ValueError(f"a list index of {count:,} digits in {shown}: at most {MAX_INDEX_DIGITS}")
    return int(digits)


#: The path step that takes an object's first value (a function's only argument, by whatever
#: name): `*`.
FIRST_VALUE = "*"


def parse_path(path: str) -> tuple[str | int, ...]:
    """`messages[-1].content`, `$.args[0]`, `["a.b"].c` -> ("messages", -1, "content"), ...;
    `*` steps into an object's first value. A ValueError names what is not understood."""
    text = path[1:] if path.startswith("$") else path
    steps: list[str | int] = []
    position = 0
    while position < len(text):
        match = _STEP.match(text, position)
        if match is None or match.end() == position:
            raise ValueError(
                f"not a JSON path at {text[position:]!r}: write keys with dots and list indices in "
                "brackets, e.g. messages[-1].content"
            )
        key, index, quoted = match.groups()
        steps.append(
            path_index(index, path) if index is not None else (quoted if quoted is not None else key)
        )
        position = match.end()
    if not steps:
        raise ValueError("an empty JSON path: leave 'path' out to read the whole value")
    return tuple(steps)


class Source(BaseModel):
    """Where one value is read: an attribute of the span (or, with `event`, of the span's first
    event of that name), or the span's name (`span: name`); `path` goes into the value's JSON."""

    model_config = _STRICT
    attribute: str | None = None
    event: str | None = None
    span: Literal["name"] | None = None
    path: str | None = None
    #: Taken off the front of the value when it starts with it (`invoke_agent ` in a span name).
    strip_prefix: str | None = None
    #: Taken off the end of the value when it ends with it, or with one of them (a method's
    #: `.forward` in a span named `{Class}.forward`: the class).
    strip_suffix: str | list[str] | None = None
    #: A fixed text, for what the trace never says (the class of a framework's one agent type);
    #: with `attribute`, only on a span that carries it.
    value: str | None = None
    #: The attribute's value is JSON (a string with its quotes): decoded before it is read.
    json_value: bool = False
    #: A record flattened into keys (`acme_inputs.city`, `acme_inputs.date`): every attribute whose
    #: key starts with this, as one object keyed by the rest of the key (`{"city": ..., "date": ...}`).
    attributes_under: str | None = None
    #: With `attributes_under`: the rest of each key is a path into the record (`0.role`,
    #: `0.contents.0.content`), its numbered steps items of lists: `[{"role": ..., "contents": [...]}]`.
    nested: bool = False

    @field_validator("path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        if value is not None:
            parse_path(value)
        return value

    @model_validator(mode="after")
    def _one_place(self) -> Source:
        if self.value is not None:
            if self.span is not None or self.event is not None or self.path is not None:
                raise ValueError("a fixed 'value' is read from nowhere: leave out span, event and path")
            return self
        if self.attributes_under is not None:
            if self.attribute is not None or self.span is not None:
                raise ValueError(
                    "'attributes_under' reads attributes by their start: leave out attribute and span"
                )
            return self
        if self.nested:
            raise ValueError("'nested' reads a record flattened into keys: give it 'attributes_under'")
        if self.span is not None and (self.attribute is not None or self.event is not None):
            raise ValueError("read either the span's name (span: name) or an attribute, not both")
        if self.span is None and self.attribute is None:
            raise ValueError(
                "say where the value is: an 'attribute' (with 'event' for an event's), or span: name"
            )
        return self


def _as_sources(value: Any) -> Any:
    """An attribute name, a source, or a list of them (tried in order), as a list of sources."""
    items = value if isinstance(value, list) else [value]
    found: list[Any] = []
    for item in items:
        if isinstance(item, str):
            found.append({"attribute": item})
        elif isinstance(item, (Mapping, Source)):
            found.append(item)
        else:
            raise ValueError(
                "should be an attribute name, a source {attribute, event, span, path, strip_prefix, "
                "strip_suffix, value, json_value, attributes_under, nested}, "
                f"or a list of them; got {item!r}"
            )
    return found


#: An attribute name, a `Source`, or several tried in order (the first that holds a value).
SourceSpec = Annotated[tuple[Source, ...], BeforeValidator(_as_sources)]


class When(BaseModel):
    """Which spans play a role: every attribute named holds one of its values (`"*"`: any; an
    attribute holding a list, one of its items), the span's name starts with one of
    `name_prefix`, and each of `holds` finds a value; an empty `when` takes every span."""

    model_config = _STRICT
    attributes: dict[str, Value | list[Value]] = Field(default_factory=dict)
    name_prefix: str | list[str] | None = None
    #: Sources that must each hold a value on the span (a path found in an attribute's JSON), for
    #: a kind the instrumentation writes no key of, only its record (Laminar's agent span: a
    #: `DEFAULT` span whose input is the agent's `{name, tools, output_type}`). Asked only of the
    #: spans the attributes and name take.
    holds: SourceSpec = ()


class ConversationReading(BaseModel):
    """Spans that are a conversation between agents (AG2's chat): each is a run too, whose parts
    are read from these sources where given (else the run's), and the agent runs nested in it,
    other than through a tool call, are its turns, not runs of their own."""

    model_config = _STRICT
    when: When
    agent_name: SourceSpec | None = None
    input: SourceSpec | None = None
    output: SourceSpec | None = None


class RunReading(BaseModel):
    """The spans that are agent runs, and where the run's parts are read. Without `when` the
    instrumentation marks no span as an agent (LangSmith's run types are `chain`, `llm`, `tool`,
    ...): its runs are the spans the framework marks (LangChain's metadata) or that the rules
    every reader shares find (an agent graph under a tool, a trace's root span around model calls
    no run holds), read as the rest of `run` says."""

    model_config = _STRICT
    when: When | None = None
    conversation: ConversationReading | None = None
    agent_name: SourceSpec | None = None
    #: Read on the span directly around the run, of the same instrumentation, the name it gives
    #: the agent wins over `agent_name` (a pipeline's name for its component, a tool's for the
    #: agent it runs).
    name_within: SourceSpec | None = None
    #: False: the name keys every reader shares (`gen_ai.agent.name`, `agent.name`) do not name
    #: the run's agent where `agent_name` reads the span's own name (the instrumentation writes
    #: them for something else, as the graph node a span ran in).
    name_keys: bool = True
    input: SourceSpec | None = None
    output: SourceSpec | None = None
    conversation_id: SourceSpec | None = None


class ToolReading(BaseModel):
    """The spans that are tool calls. A span with status ERROR (or an `exception` event) failed;
    `error`, when it holds a value, says the call failed too, and why."""

    model_config = _STRICT
    when: When
    name: SourceSpec | None = None
    call_id: SourceSpec | None = None
    arguments: SourceSpec | None = None
    result: SourceSpec | None = None
    error: SourceSpec | None = None


class ModelReading(BaseModel):
    """The spans that are model (LLM) calls: their messages, when the run span has none."""

    model_config = _STRICT
    when: When
    input: SourceSpec | None = None
    output: SourceSpec | None = None
    model: SourceSpec | None = None
    input_tokens: SourceSpec | None = None
    output_tokens: SourceSpec | None = None


class HandoffReading(BaseModel):
    """The spans that hand the conversation to another agent, named by `target`; `name` is the
    tool the model asked for to do it, when the span says."""

    model_config = _STRICT
    when: When
    target: SourceSpec
    name: SourceSpec | None = None


class ConventionDescription(BaseModel):
    """One instrumentation: the spans it reads, and where each part of a run is found."""

    model_config = _STRICT
    name: str = Field(min_length=1)
    #: Instrumentation scope names (exact) whose spans this describes.
    scope: str | list[str] | None = None
    #: Attributes, any of which marks a span as this instrumentation's (with or without `scope`).
    marker_attributes: list[str] | None = None
    #: Span-name endings, any of which marks a span as this instrumentation's, for one that writes
    #: under the application's scope and marks some spans by their names alone (Griptape's
    #: `Agent.run()`, `{Tool}.try_run()`).
    marker_name_suffix: str | list[str] | None = None
    #: Every attribute value is JSON-encoded (MLflow's `"AGENT"`): `when` values are compared
    #: with their JSON form, and what is read is decoded.
    json_values: bool = False
    run: RunReading
    tool: ToolReading | None = None
    model: ModelReading | None = None
    handoff: HandoffReading | None = None

    @model_validator(mode="after")
    def _marked(self) -> ConventionDescription:
        if self.scope is None and not self.marker_attributes and not self.marker_name_suffix:
            raise ValueError(
                "say which spans this describes: their instrumentation 'scope', "
                "'marker_attributes' they carry, or a 'marker_name_suffix' their names end with"
            )
        return self


def descriptions_from(document: Any) -> list[ConventionDescription]:
    """Descriptions from a parsed YAML list (shipped files); pydantic's error if one is wrong."""
    items = document if isinstance(document, list) else [document]
    return [ConventionDescription.model_validate(item) for item in items]
