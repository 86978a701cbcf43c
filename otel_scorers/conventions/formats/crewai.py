"""CrewAI's own texts and objects, as OpenInference, OpenLLMetry and LoongSuite record them.

A CrewAI run, as its user means it, is one agent's work on one task (or one `Agent.kickoff`):
the agent is its role, the input the task description it got, the output its final answer. The
crew around the tasks is not a run. The task reaches the model only inside CrewAI's prompt
template (its English default), as the last user message:

    \\nCurrent Task: {description}\\n\\nThis is the expected criteria for your final answer: ...

followed, when the task has them, by the context of earlier tasks and the closing line; a kicked
off agent's message arrives as `\\nCurrent Task: {message}`. A tool that raised is sent back to
the model as `Error executing tool: {error}`. OpenInference's task span writes the `TaskOutput`
(`description`, `raw`, ...) and a kickoff's `LiteAgentOutput` (`raw`, ...) as JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_TASK_PREFIX = "Current Task: "
#: What CrewAI's template writes after the task description (the first that occurs ends it).
_AFTER_TASK = (
    "\n\nThis is the expected criteria for your final answer:",
    "\n\nThis is the context you're working with:",
    "\n\nBegin! This is VERY important to you",
    "\n\nProvide your complete response:",
)
#: A task's description and expected output, as LoongSuite writes them as the agent's input.
_TASK_FIELD, _EXPECTED_FIELD = "Task: ", "Expected output: "
TOOL_ERROR_PREFIX = "Error executing tool: "
#: Keys CrewAI's own objects put on an agent's span, whichever instrumentation wrote it: its
#: crew's key (a task run), its task's description (the event bus), its agent's backstory (a
#: kickoff). No other framework writes them, so they say the span is CrewAI's under any scope.
_CREW_KEY, _TASK_DESCRIPTION, _BACKSTORY = "crew_key", "task_description", "agent.backstory"

#: Keys an instrumentation writes only on CrewAI's spans, whatever its scope (LoongSuite's, whose
#: scope is the GenAI handler its instrumentations share): the operation CrewAI ran.
INSTRUMENTATION_KEYS = frozenset({"gen_ai.crewai.operation"})


def written_by_crewai(attributes: Mapping[str, Any]) -> bool:
    """The span carries CrewAI's own keys (three lookups: this runs for every run span)."""
    return _CREW_KEY in attributes or _TASK_DESCRIPTION in attributes or _BACKSTORY in attributes


def task_in_prompt(text: str) -> str | None:
    """The task description in the user message CrewAI's template made, or in a task's fields as
    an instrumentation writes them as the agent's input (`Task: ...` then `Expected output: ...`,
    LoongSuite's two text parts, read joined), None for other text."""
    body = text.lstrip("\n")
    if body.startswith(_TASK_FIELD) and (end := body.find(_EXPECTED_FIELD)) > len(_TASK_FIELD):
        return body[len(_TASK_FIELD) : end].rstrip()
    if not body.startswith(_TASK_PREFIX):
        return None
    body = body[len(_TASK_PREFIX) :]
    ends = [index for marker in _AFTER_TASK if (index := body.find(marker)) >= 0]
    return body[: min(ends)] if ends else body.rstrip("\n")


def tool_error(response: Any) -> str | None:
    """The error of a call whose result CrewAI sent back as its failure text; None otherwise."""
    if isinstance(response, str) and response.startswith(TOOL_ERROR_PREFIX):
        return response[len(TOOL_ERROR_PREFIX) :] or response
    return None


def output_field(output: Any, key: str) -> str | None:
    """A text field (`raw`, `description`) of a TaskOutput or LiteAgentOutput decoded from JSON."""
    if isinstance(output, Mapping) and isinstance(output.get(key), str):
        return str(output[key])
    return None
