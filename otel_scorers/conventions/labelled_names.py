"""Span names and entity names that say only the kind of what ran.

A span named by a label of its kind and the name of what it ran, quoted (`agent run:
'weather-agent'`, `tool: 'get_weather'`, `step "plan"`), names the agent, or the tool, by the
quoted part: the label says only the kind. A tool call named only by a tool's kind (`tool`: an
entity's kind, where a tracer writes the entity's name key with the kind of what it records) was
not read in its tracer's vocabulary: it is named by the tool name keys the readers share
(`gen_ai.tool.name`, `tool.name`), and what its reader did not find of it is read from the keys
of the tool beside that name (`tool.parameters`, `tool.result`, `tool.error`: holding a value,
the call failed). Read where a
reader fell back to the span's own name, or to its kind, for an agent's or a tool's
(`runs/agent_names.py`, `runs/tool_matching.py`), whichever reader claimed the span.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.inferred_kinds import TOOL_KINDS, normalised
from otel_scorers.gen_ai_names import GEN_AI_TOOL_NAME
from otel_scorers.model import ToolCall, made_tool_call
from otel_scorers.span_record import SpanRecord

#: A label of words (`agent run`, `tool`), a colon or not, a space, then the name in quotes.
_LABELLED = re.compile(r"""^[A-Za-z][A-Za-z _-]*:? (['"])([^'"]+)\1$""")
_QUOTES = ("'", '"')
#: The keys naming a tool that the readers share.
TOOL_NAME_KEYS = (GEN_AI_TOOL_NAME, "tool.name")
#: The keys of the tool beside `tool.name`: the arguments it was called with, its result, its failure.
_ARGUMENT_KEYS = ("tool.parameters", "tool.arguments", "tool.args", "tool.input")
_RESULT_KEY = "tool.result"
_ERROR_KEY = "tool.error"


def labelled_name(span_name: str) -> str | None:
    """The quoted name a span's name gives after a label of its kind; None for any other name."""
    if not span_name.endswith(_QUOTES):  # most names: one look
        return None
    match = _LABELLED.match(span_name)
    return match.group(2).strip() or None if match else None


def labelled_call(call: ToolCall, span: SpanRecord) -> ToolCall:
    """The call named by the quoted name its span's name gives after a label of its kind (`tool:
    'get_weather'`) when its reader fell back to the span's own name, or by the tool name keys
    the readers share when its reader read only a tool's kind (`tool`)."""
    if call.name == span.name:
        name = labelled_name(span.name)
    elif call.name in TOOL_KINDS or normalised(call.name) in TOOL_KINDS:
        name = next((value for key in TOOL_NAME_KEYS if _names(value := span.attributes.get(key))), None)
        if name is not None:
            return _read_beside(call, name, span.attributes)
    else:
        return call
    if name is None or name == call.name:
        return call
    return made_tool_call(
        name, call.call_id, call.arguments, call.result, call.state, call.error, call.start_ns, call.end_ns
    )


def _read_beside(call: ToolCall, name: str, attributes: Mapping[str, Any]) -> ToolCall:
    """The call named `name`, with what its reader did not find of it read from the tool's keys."""
    arguments, result, state, error = call.arguments, call.result, call.state, call.error
    if arguments is None:
        arguments = decode_json(next((attributes[k] for k in _ARGUMENT_KEYS if k in attributes), None))
    failure = attributes.get(_ERROR_KEY)
    if state == "ok" and result is None and isinstance(failure, str) and failure:
        state, error = "error", failure
    elif state == "ok" and result is None:
        result = decode_json(attributes.get(_RESULT_KEY))
    return made_tool_call(name, call.call_id, arguments, result, state, error, call.start_ns, call.end_ns)


def _names(value: object) -> bool:
    return isinstance(value, str) and bool(value) and normalised(value) not in TOOL_KINDS
