"""The generic input and output keys: where a span keeps what it was given and what it gave when
the key its reader reads is absent, whichever reader claimed it.

A framework's next release, or another runtime of it, may write a call's input and output under
the generic keys many tracers share (`input.value` / `output.value`, OpenInference's; bare
`input` / `output`), or under a key of its own namespace shaped as a tool's
(`acme.tool.call.arguments`), instead of the key its reader knows. What a reader found
wins; where it found nothing, these keys are read, in this order: a tool's arguments and result
(`tool_call_io`), a run's request and answer from the bare keys (`run_io`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import orjson

from otel_scorers.conventions.bare_keys import BARE_INPUT, BARE_OUTPUT
from otel_scorers.conventions.base import RunSpanContent
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import is_placeholder, result_error_text, result_has_error
from otel_scorers.conventions.formats.recorded_call import CALL_KEYS, call_arguments
from otel_scorers.conventions.genai import NAMESPACE_OUTPUT
from otel_scorers.model import ToolCall, changed_tool_call
from otel_scorers.span_record import SpanRecord

#: The generic keys of what a span was given, and of what it gave, in the order they are read.
#: The last are the GenAI conventions' own names, before their messages, for what a call was
#: given and gave (`gen_ai.prompt` / `gen_ai.completion`), kept on the span whole.
INPUT_KEYS = ("input.value", BARE_INPUT, "gen_ai.prompt")
OUTPUT_KEYS = ("output.value", BARE_OUTPUT, "gen_ai.completion", NAMESPACE_OUTPUT)
#: Those read for a run: OpenInference's `input.value` / `output.value` on a run span are its
#: reader's to judge (LlamaIndex's workflow state there is no request).
#: Then the agent's, beside the name key every reader shares (`agent.name`, `NAME_KEYS`).
RUN_INPUT_KEYS = (BARE_INPUT, "gen_ai.prompt", "agent.input")
RUN_OUTPUT_KEYS = (BARE_OUTPUT, "gen_ai.completion", "agent.output")
#: A key of a namespace's own record of the span it is written on (`<namespace>.observation.input`,
#: `<namespace>.span.output`): what a tracer's exporter writes on every span it converts (Mastra's
#: `LangfuseExporter`: Langfuse's `langfuse.observation.input`), whatever reader claimed the span;
#: and the text of its answer (`<namespace>.response.text`: an AI SDK's `ai.response.text`, a
#: tracer's `gen_ai.response.text`, which the GenAI conventions do not define). Read for a run
#: after the bare keys.
_RECORD_KEY = re.compile(
    r"(?i)^[a-z0-9_]+(?:\.[a-z0-9_]+)*?\.(?:(?:observation|span)\.(?:input|output)|response\.text)$"
)
#: The last part of a tool's key, in any namespace, that holds a tool call's arguments, and its
#: result (`acme.tool.call.arguments`, `acme.tool.args`, `acme.tool.input`; `acme.tool.call.result`,
#: `acme.tool.output`): read on a tool span after the generic keys, when exactly one key of the
#: span ends so.
ARGUMENT_TAILS = frozenset({"arguments", "args", "input"})
RESULT_TAILS = frozenset({"result", "output"})
#: The last part of a tool's key that says the call failed (`acme.tool.error`), read on a tool
#: span whose result holds an error: holding a value (true, a message), the call failed, its
#: result only the error it sent back.
ERROR_TAILS = frozenset({"error"})
#: A key of a namespace's tool: `<namespace>.tool.<tail>` or `<namespace>.tool.call.<tail>`.
_TOOL_KEY = re.compile(
    r"(?i)^[a-z0-9_]+(?:[.:][a-z0-9_]+)*?[.:]tool(?:[.:_]call)?[.:](arguments|args|input|result|output|error)$"
)


def generic_value(attributes: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    """The first of `keys` that holds a value on the span, not what an instrumentation writes in
    place of content it did not capture; None when none does."""
    for key in keys:
        value = attributes.get(key)
        if value is not None and value != "" and not is_placeholder(value):
            return value
    return None


def _shaped_value(span: SpanRecord, tails: frozenset[str]) -> Any:
    """The value of the one key of the span whose last part is one of `tails` (lower case), not
    a placeholder of content not captured; None when no key, or more than one, ends so, or when
    a generic key says content was not captured. Decided once per kind of span (its scope, name,
    keys: two instrumentations may share a scope's name and a span's) for the many that carry
    no such key."""
    shaped = _TOOL_KEYS.of(span)
    if not shaped:
        return None
    attributes = span.attributes
    found = [key for key in shaped if _TOOL_KEY.match(key).group(1).lower() in tails]  # type: ignore[union-attr]
    if len(found) != 1:
        return None
    value = attributes[found[0]]
    if value is None or value == "" or is_placeholder(value):
        return None
    if any(is_placeholder(attributes.get(key)) for key in (*INPUT_KEYS, *OUTPUT_KEYS)):
        return None
    return value


class _KeysMatching:
    """The attribute keys of a span that match a pattern, each key's name looked at once: the sets
    of keys classified and of those matching are replaced, never changed in place, so that threads
    building runs at once each read a whole set; past `_MAX_REMEMBERED_KEYS` keys those classified
    are forgotten. Kinds of span (scope, name, keys: two instrumentations may share a scope's name
    and a span's) seen carrying none are remembered, within `_MAX_REMEMBERED_KINDS`."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self._pattern = pattern
        self._seen: frozenset[str] = frozenset()
        self._matching: frozenset[str] = frozenset()
        self._kinds_without: dict[tuple[str | None, ...], bool] = {}

    def of(self, span: SpanRecord) -> Any:
        """The span's keys that match (a set view: empty for most spans)."""
        attributes = span.attributes
        kind = (span.scope, span.name, *attributes)
        if self._kinds_without.get(kind):
            return ()
        keys = attributes.keys()
        if not self._seen.issuperset(keys):
            if len(self._seen) < _MAX_REMEMBERED_KEYS:
                seen, matching = self._seen, self._matching
            else:
                seen, matching = frozenset(), frozenset()
            new = keys - seen
            self._matching = matching | {key for key in new if self._pattern.match(key)}
            self._seen = seen | new
        found = keys & self._matching
        if not found and len(self._kinds_without) < _MAX_REMEMBERED_KINDS:
            self._kinds_without[kind] = True
        return found


_MAX_REMEMBERED_KEYS = 8192
_MAX_REMEMBERED_KINDS = 4096
#: Keys shaped as a tool's, and a namespace's record keys of its span.
_TOOL_KEYS = _KeysMatching(_TOOL_KEY)
_RECORD_KEYS = _KeysMatching(_RECORD_KEY)


def tool_call_io(call: ToolCall, span: SpanRecord) -> ToolCall:
    """The call with its arguments, and the result of a call that did not fail, from the generic
    keys where its reader found none (JSON text decoded: a JSON-encoded string is that string);
    arguments recorded as a function's keyword arguments (`{"args": [], "kwargs": {...}}`) are
    those (`recorded_call.call_arguments`), for the rules that read them before the call is
    read whole (a handoff's target)."""
    if call.state == "result_error":  # few calls: a result holding an error
        call = _failed_by_key(call, span)
    if call.arguments is not None and (call.result is not None or call.state != "ok"):
        return _called_with(call)  # most calls: their reader found both
    attributes = span.attributes
    arguments = call.arguments
    if arguments is None:
        arguments = decode_json(generic_value(attributes, INPUT_KEYS) or _shaped_value(span, ARGUMENT_TAILS))
    result = call.result
    if result is None and call.state == "ok":
        result = decode_json(generic_value(attributes, OUTPUT_KEYS) or _shaped_value(span, RESULT_TAILS))
    if arguments is call.arguments and result is call.result:
        return _called_with(call)
    if result is not call.result and result_has_error(result):  # as a reader reads a result's error
        return changed_tool_call(
            call, arguments=arguments, result=result, state="result_error", error=result_error_text(result)
        )
    return changed_tool_call(call, arguments=arguments, result=result)


def _failed_by_key(call: ToolCall, span: SpanRecord) -> ToolCall:
    """The call whose result holds an error failed, without a result, when a key of its tool
    says so (`acme.tool.error`): its error the key's message, else the one its result holds."""
    failure = _shaped_value(span, ERROR_TAILS)
    if failure is None or failure is False or failure == "false":
        return call
    error = failure if isinstance(failure, str) and failure != "true" else call.error or "error"
    return changed_tool_call(call, result=None, state="error", error=error)


def _called_with(call: ToolCall) -> ToolCall:
    arguments = call.arguments
    if isinstance(arguments, str):
        if not arguments.startswith('{"') or '"kwargs"' not in arguments:
            return call  # the cheap check, for the many calls not recorded as a function's
        arguments = decode_json(arguments)
    # Only a call recorded alone: a framework's own record beside it (LangChain's callbacks'
    # `{"inputs", "kwargs", ...}`) is its reader's to reduce, later.
    if not isinstance(arguments, dict) or "kwargs" not in arguments or not arguments.keys() <= CALL_KEYS:
        return call
    called = call_arguments(arguments)
    return call if called is arguments else changed_tool_call(call, arguments=called)


def run_io(content: RunSpanContent, span: SpanRecord) -> RunSpanContent:
    """The run span's content with its request and answer from the bare generic keys (as text,
    for the reductions every run's text goes through) where its reader found neither text nor
    messages, or found a text that holds the bare key's and more: a record around the request
    or answer (a prompt built on the task), read from a key its reader falls back to."""
    attributes = span.attributes
    wants_input = content.input_text is None and not content.input.captured
    wants_output = content.output_text is None and not content.output.captured
    # A text read is asked about (`_holds_more`) only when there is one: most run spans have none.
    read_input, read_output = content.input_text, content.output_text
    wants_input = wants_input or (
        read_input is not None and _holds_more(read_input, attributes, RUN_INPUT_KEYS)
    )
    wants_output = wants_output or (
        read_output is not None and _holds_more(read_output, attributes, RUN_OUTPUT_KEYS)
    )
    if not (wants_input or wants_output):
        return content
    request = generic_value(attributes, RUN_INPUT_KEYS) if wants_input else None
    answer = generic_value(attributes, RUN_OUTPUT_KEYS) if wants_output else None
    if (wants_input and request is None) or (wants_output and answer is None):
        recorded = _RECORD_KEYS.of(span)
        if recorded:
            request = _recorded(attributes, recorded, "input") if wants_input and request is None else request
            answer = _recorded(attributes, recorded, "output") if wants_output and answer is None else answer
    if request is None and answer is None:
        return content
    return replace(
        content,
        input_text=_text(request) if request is not None else content.input_text,
        output_text=_text(answer) if answer is not None else content.output_text,
    )


def _recorded(attributes: Mapping[str, Any], keys: Any, side: str) -> Any:
    """The one value the span's record keys (`_RECORD_KEY`) of that side hold; None when none
    does, or when two of them differ."""
    values = {
        value
        for key in keys
        if key.endswith(_RECORD_TAILS[side])
        and isinstance(value := attributes[key], str)
        and value != ""
        and not is_placeholder(value)
    }
    return values.pop() if len(values) == 1 else None


#: How a record key of each side ends.
_RECORD_TAILS = {"input": (".input",), "output": (".output", ".response.text")}


def _holds_more(read: str, attributes: Mapping[str, Any], keys: tuple[str, ...]) -> bool:
    """The text a reader read holds, and is more than, a bare key's text on the span."""
    bare = generic_value(attributes, keys)
    return isinstance(bare, str) and bare.strip() != "" and len(bare) < len(read) and bare in read


def _text(value: Any) -> str | None:
    """The value as text: a JSON-encoded string as that string, a structure (an OTLP key-value
    list) as its JSON."""
    if isinstance(value, str):
        if len(value) >= 2 and value[0] == value[-1] == '"':
            decoded = decode_json(value)
            return decoded if isinstance(decoded, str) else value
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return None
