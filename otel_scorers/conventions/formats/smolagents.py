"""smolagents' own texts, as a chat model is sent them, whichever instrumentation recorded the call.

smolagents keeps an agent's steps in its memory and writes them into every model request as
text: a step's tool calls as an assistant message (its `tool-call` role, sent as `assistant` to a
chat API) of the form

    Calling tools:
    [{'id': 'call_1', 'type': 'function', 'function': {'name': 'get_weather', 'arguments': {...}}}]

(a Python repr), and what they returned as the next message (`tool-response`, sent as `user`),
`Observation:\\n{observation}`. A tool that raised is not kept as a call: the model is told in the
task's message, `Error:\\nError executing tool '{name}' with arguments {arguments}: {error}`. When no
span records the tools (OpenTelemetry's smolagents instrumentation writes none), these texts are
where the trace keeps what each call returned.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from otel_scorers.conventions.base import Message
from otel_scorers.conventions.formats.json_values import python_literal
from otel_scorers.conventions.formats.messages import text_of

#: `Tool.__call__`'s own parameter, beside the tool's arguments in its recorded bound arguments.
CALL_PARAMETERS = frozenset({"sanitize_inputs_outputs"})
CALLING_TOOLS = "Calling tools:\n"
OBSERVATION = "Observation:\n"
#: What smolagents tells the model of a tool that raised (`AgentToolExecutionError`).
_TOOL_ERROR = re.compile(r"Error executing tool '([^'\n]+)' with arguments (\{[^\n]*\}|[^:\n]*): ([^\n]*)")
#: Looked for before the pattern: most texts hold no failure.
_ERROR_MARK = "Error executing tool '"


@dataclass(slots=True)
class HistoryResults:
    """What a request's history says the calls before it returned: each call's observation by
    its id, and (tool, arguments, error) of each call that failed."""

    by_id: dict[str, str] = field(default_factory=dict)
    failures: list[tuple[str, Any, str]] = field(default_factory=list)


def history_results(messages: Sequence[Message]) -> HistoryResults:
    """The results and failures the request's history holds as smolagents' text (see the module's
    docstring). A step that made several calls sends their observations as one text, which is
    not split: its calls get none."""
    found = HistoryResults()
    pending: list[str] = []
    for message in messages:
        text = text_of(message)
        if text.startswith(CALLING_TOOLS):
            pending = _call_ids(text[len(CALLING_TOOLS) :])
            continue
        if len(pending) == 1 and text.startswith(OBSERVATION):
            found.by_id.setdefault(pending[0], text[len(OBSERVATION) :])
        pending = []
        if _ERROR_MARK in text:
            for match in _TOOL_ERROR.finditer(text):
                name, arguments, error = match.groups()
                found.failures.append((name, python_literal(arguments, arguments), error))
    return found


def _call_ids(text: str) -> list[str]:
    calls = python_literal(text.strip(), None)
    if not isinstance(calls, list):
        return []
    return [call["id"] for call in calls if isinstance(call, Mapping) and isinstance(call.get("id"), str)]
