"""A span named by a label of its kind and the name of what it ran, quoted: `agent run:
'weather-agent'`, `tool: 'get_weather'`, `step "plan"`. A tracer that names its spans so names
the agent, or the tool, by the quoted part: the label says only the kind. Read where a reader fell
back to the span's own name for an agent's or a tool's (`runs/agent_names.py`,
`runs/tool_matching.py`), whichever reader claimed the span."""

from __future__ import annotations

import re

from otel_scorers.model import ToolCall, made_tool_call
from otel_scorers.span_record import SpanRecord

#: A label of words (`agent run`, `tool`), a colon or not, a space, then the name in quotes.
_LABELLED = re.compile(r"""^[A-Za-z][A-Za-z _-]*:? (['"])([^'"]+)\1$""")
_QUOTES = ("'", '"')


def labelled_name(span_name: str) -> str | None:
    """The quoted name a span's name gives after a label of its kind; None for any other name."""
    if not span_name.endswith(_QUOTES):  # most names: one look
        return None
    match = _LABELLED.match(span_name)
    return match.group(2).strip() or None if match else None


def labelled_call(call: ToolCall, span: SpanRecord) -> ToolCall:
    """The call named by the quoted name its span's name gives after a label of its kind (`tool:
    'get_weather'`) when its reader fell back to the span's own name."""
    if call.name != span.name:
        return call
    name = labelled_name(span.name)
    if name is None:
        return call
    return made_tool_call(
        name, call.call_id, call.arguments, call.result, call.state, call.error, call.start_ns, call.end_ns
    )
