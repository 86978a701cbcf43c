"""The reader a `ConventionDescription` makes: a `Convention` like the ones written in code.

Everything a description says is compiled once, when it is made: `when` into sets of accepted values,
sources into tuples of steps, so that reading a span is dictionary lookups. Run assembly (`run_builder`)
treats a described reader as any other: its fallbacks (the first model call's input, the last one's
answer, tool calls matched to the model's requests) apply the same.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson

from otel_scorers.conventions import described_text as text
from otel_scorers.conventions.bare_keys import bare_keys_of
from otel_scorers.conventions.base import Convention, Markers, ModelCall, RunSpanContent, SpanRole
from otel_scorers.conventions.described_sources import (
    MISSING,
    CompiledSource,
    CompiledWhen,
    compiled_sources,
    compiled_when,
    listed,
    path_missed,
    raw_value,
    untyped,
    walk,
)
from otel_scorers.conventions.described_text import decoded_value, run_text, scalar_text
from otel_scorers.conventions.description import (
    ConventionDescription,
)
from otel_scorers.conventions.formats.genai_events import listed_messages
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import (
    as_int,
    as_str,
    handoff_tool_name,
    is_placeholder,
    span_tool_call,
    tool_state,
)
from otel_scorers.conventions.formats.python_repr import data_with_objects
from otel_scorers.model import ToolCall
from otel_scorers.span_record import SpanRecord


class DescribedConvention(Convention):
    """A convention read as its `ConventionDescription` says."""

    def __init__(self, description: ConventionDescription) -> None:
        self.description = description
        self.name = description.name
        self._scopes = frozenset(listed(description.scope))
        #: The instrumentation scopes it reads (none: it is found by its marker attributes).
        self.scopes: tuple[str, ...] = tuple(sorted(self._scopes))
        self._markers = tuple(description.marker_attributes or ())
        self._name_suffixes = tuple(listed(description.marker_name_suffix))
        # Without scopes and name endings, its marker attributes are all `detect` reads.
        self.markers = (
            Markers(keys=frozenset(self._markers))
            if self._markers and not self._scopes and not self._name_suffixes
            else None
        )
        self._json = description.json_values
        run = description.run
        # Without `when`, no span is a run by this reader's say (`RunReading`).
        self._run_when = compiled_when(run.when, self._json) if run.when is not None else None
        bare = bare_keys_of(run)
        self._agent_name = compiled_sources(run.agent_name, bare)
        self._name_within = compiled_sources(run.name_within)
        self.agent_name_keys = run.name_keys
        self._run_input = compiled_sources(run.input, bare)
        self._run_output = compiled_sources(run.output, bare)
        talk = run.conversation
        self._conversation_when = compiled_when(talk.when, self._json) if talk else None
        if talk:  # a conversation's sources, each else the run's
            sources = map(compiled_sources, (talk.agent_name, talk.input, talk.output))
            self._talk = tuple(a or b for a, b in zip(sources, self._run_sources(), strict=True))
        self._conversation = compiled_sources(run.conversation_id, bare)
        self._handoff_when = None
        if description.handoff is not None:
            self._handoff_when = compiled_when(description.handoff.when, self._json)
            self._handoff_target = compiled_sources(description.handoff.target)
            self._handoff_name = compiled_sources(description.handoff.name)
        self._tool_when = None
        if description.tool is not None:
            tool = description.tool
            self._tool_when = compiled_when(tool.when, self._json)
            self._tool_name = compiled_sources(tool.name)
            self._call_id = compiled_sources(tool.call_id)
            self._arguments = compiled_sources(tool.arguments)
            self._result = compiled_sources(tool.result)
            self._error = compiled_sources(tool.error)
        self._model_when = None
        if description.model is not None:
            model = description.model
            self._model_when = compiled_when(model.when, self._json)
            self._model_input = compiled_sources(model.input)
            self._model_output = compiled_sources(model.output)
            self._model_name = compiled_sources(model.model)
            self._input_tokens = compiled_sources(model.input_tokens)
            self._output_tokens = compiled_sources(model.output_tokens)
        self.run_start_names, self.run_start_markers = self._run_start()
        self.run_start_scopes: tuple[str, ...] = tuple(sorted(self._scopes))
        self.handoff_start_names: tuple[str, ...] = ()
        #: The span last read on this thread and the JSON decoded from it, by the id of the text
        #: (kept beside it): the fields of one span that read one attribute decode it once.
        self._last = threading.local()

    def _run_start(self) -> tuple[tuple[str, ...], tuple[tuple[str, str | None], ...]]:
        """What lets the in-process processor spot a run span as it starts (`may_start_run`): the
        name prefixes and the (key, value)s it starts with of its runs and conversations (with
        the scope: some SDKs label spans after start)."""
        runs = [when for when in (self._run_when, self._conversation_when) if when is not None]
        names = tuple(p for when in runs for p in when.name_prefixes)
        markers = tuple(
            (key, value)
            for when in runs
            for key, values in when.attributes
            for value in (sorted(values, key=str) if values is not None else [None])
            if value is None or isinstance(value, str)
        )
        return names, markers

    def detect(self, span: SpanRecord) -> bool:
        if self._scopes and span.scope not in self._scopes:
            return False
        if self._name_suffixes and span.name.endswith(self._name_suffixes):
            return True
        if not self._markers:
            return not self._name_suffixes
        # One set operation, in C: a span of many keys (flattened messages) is asked anew.
        return not span.attributes.keys().isdisjoint(self._markers)

    @property
    def marker_keys(self) -> tuple[str, ...]:
        """The attribute keys that mark its spans (`marker_attributes`)."""
        return self._markers

    def role_whens(self) -> tuple[CompiledWhen, ...]:
        """The conditions of its roles (run, conversation, handoff, tool, model) it states."""
        whens = (
            self._run_when,
            self._conversation_when,
            self._handoff_when,
            self._tool_when,
            self._model_when,
        )
        return tuple(when for when in whens if when is not None)

    def _run_sources(self) -> tuple[tuple[CompiledSource, ...], ...]:
        return (self._agent_name, self._run_input, self._run_output)

    def role(self, span: SpanRecord) -> SpanRole | None:
        if self._run_when is not None and self._run_when.matches(span):
            return "run"
        if self._handoff_when is not None and self._handoff_when.matches(span):
            return "tool"
        if self._tool_when is not None and self._tool_when.matches(span):
            return "tool"
        if self._model_when is not None and self._model_when.matches(span):
            return "model"
        return "run" if self.absorbs_turns(span) else None

    def run_content(self, span: SpanRecord) -> RunSpanContent:
        names, inputs, outputs = self._talk if self.absorbs_turns(span) else self._run_sources()
        content = RunSpanContent(
            agent_name=as_str(scalar_text(self._read(span, names))),
            conversation_id=as_str(scalar_text(self._read(span, self._conversation))),
        )
        run_text(content, "input", self._read(span, inputs), "user")
        run_text(content, "output", self._read(span, outputs), "assistant")
        return content

    def name_within(self, run_span: SpanRecord, parent: SpanRecord) -> str | None:
        if not self._name_within or not self.detect(parent):
            return None
        return as_str(scalar_text(self._read(parent, self._name_within)))

    def tool_call(self, span: SpanRecord) -> ToolCall:
        if self.internal_tool(span):
            target = self.handoff_target(span) or ""
            name = as_str(scalar_text(self._read(span, self._handoff_name))) or handoff_tool_name(target)
            return span_tool_call(span, name=name, call_id=None, arguments=None, result=None)
        if self._tool_when is None:  # not reached: only a described role reads a call
            return span_tool_call(span, name=span.name, call_id=None, arguments=None, result=None)
        result = decoded_value(self._read(span, self._result))
        state, error = tool_state(span, result)
        failure = self._read(span, self._error)
        if state == "ok" and failure is not None and failure != "" and failure is not False:
            state, error = "error", failure if isinstance(failure, str) else orjson.dumps(failure).decode()
        return span_tool_call(
            span,
            name=as_str(scalar_text(self._read(span, self._tool_name))) or span.name,
            call_id=as_str(scalar_text(self._read(span, self._call_id))),
            arguments=decoded_value(self._read(span, self._arguments)),
            result=result,
            state=state,
            error=error,
        )

    def model_call(self, span: SpanRecord) -> ModelCall:
        if self._model_when is None:  # not reached: only a described role reads a call
            return ModelCall(span.span_id, span.start_ns)
        return ModelCall(
            span_id=span.span_id,
            start_ns=span.start_ns,
            input=listed_messages(self._read(span, self._model_input), "user"),
            output=listed_messages(self._read(span, self._model_output), "assistant"),
            model=as_str(scalar_text(self._read(span, self._model_name))),
            input_tokens=as_int(self._read(span, self._input_tokens)),
            output_tokens=as_int(self._read(span, self._output_tokens)),
        )

    def run_at_top(self, span: SpanRecord) -> bool:
        # A run `when` that names the kind of a span by a key the span does not carry leaves it
        # untyped: another runtime of the instrumentation writes the default kind as no key at
        # all, and such a root span is the application's unit of work as well.
        return self._run_when is None or untyped(self._run_when, span)

    def absorbs_turns(self, span: SpanRecord) -> bool:
        return self._conversation_when is not None and self._conversation_when.matches(span)

    def internal_tool(self, span: SpanRecord) -> bool:
        return self._handoff_when is not None and self._handoff_when.matches(span)

    def handoff_target(self, span: SpanRecord) -> str | None:
        if not self.internal_tool(span):
            return None
        return as_str(scalar_text(self._read(span, self._handoff_target))) or ""

    def _read(self, span: SpanRecord, sources: Sequence[CompiledSource]) -> Any:
        """The first of `sources` that holds a value on the span; None when none does."""
        decode = self._decoder(span)
        # Sources tried in turn often read one attribute by several paths: decoded once.
        raw: Any = MISSING
        decoded: Any = None
        for source in sources:
            value = raw_value(span, source)
            if value is None or value is MISSING:
                continue
            if self._json or source.path or source.json_value:
                if value is not raw:
                    raw, decoded = value, decode(value)
                value = decoded
            if source.path:
                value = walk(value, source.path, decode)
                if value is None:
                    path_missed(source)
                    continue
            if source.strip_prefix and isinstance(value, str) and value.startswith(source.strip_prefix):
                value = value[len(source.strip_prefix) :]
            if source.strip_suffixes and isinstance(value, str):
                value = text.without_suffix(value, source.strip_suffixes)
            if value == "" or is_placeholder(value):
                continue
            return value
        return None

    def _decoder(self, span: SpanRecord) -> Callable[[Any], Any]:
        """`decode_json` for `span`'s values, each text decoded once however many fields read it
        (a description may read one large attribute for many fields, or try many paths in it)."""
        last = self._last
        if getattr(last, "span", None) is not span:
            last.span, last.decoded = span, {}
        decoded: dict[int, tuple[Any, Any]] = last.decoded

        def decode(value: Any) -> Any:
            if not isinstance(value, (str, bytes)) or len(value) < _DECODE_ONCE_CHARS:
                return decoded_data(value)
            known = decoded.get(id(value))
            if known is None or known[0] is not value:
                known = decoded[id(value)] = (value, decoded_data(value))
            return known[1]

        return decode


def decoded_data(value: Any) -> Any:
    """A value decoded as JSON, or as the Python repr of data, objects in it read as their fields
    (a framework's `{'messages': [ToolMessage(...)]}`); anything else as it is."""
    found = decode_json(value)
    # Not JSON nor a literal: an object's repr inside is a class's call with keyword fields.
    if (
        found is value
        and isinstance(value, str)
        and value[:1] in ("{", "[")
        and "=" in value
        and "(" in value
    ):
        read = data_with_objects(value)
        return value if read is None else read
    return found


#: Shorter texts are decoded as often as they are read: remembering them would cost more.
_DECODE_ONCE_CHARS = 256


def described(
    descriptions: Sequence[ConventionDescription | Mapping[str, Any]],
) -> tuple[DescribedConvention, ...]:
    """The readers of `descriptions` (models, or mappings validated here)."""
    valid = ConventionDescription.model_validate
    return tuple(
        DescribedConvention(item if isinstance(item, ConventionDescription) else valid(item))
        for item in descriptions
    )
