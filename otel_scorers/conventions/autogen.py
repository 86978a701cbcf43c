"""AutoGen AgentChat's built-in tracing (autogen-core, `gen_ai.system` = `autogen`).

autogen-core writes GenAI `invoke_agent {agent}` and `execute_tool {tool}` spans (the latter with
the tool's name, description and call id, never its arguments or result); the model calls come
from whatever instrumentation the OpenAI client has. AutoGen-specific: a Swarm agent hands the
conversation on by calling a handoff tool (`transfer_to_{target}`, described as
`Handoff to {target}.` unless the user says otherwise): a handoff, not a tool call. The same
handoff tools appear in OpenInference's AgentChat instrumentation, which reads them from here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions import genai
from otel_scorers.conventions.base import Convention
from otel_scorers.conventions.formats.autogen import result_part
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import as_str
from otel_scorers.gen_ai_names import GEN_AI_SYSTEM, GEN_AI_TOOL_DESCRIPTION, GEN_AI_TOOL_NAME
from otel_scorers.span_record import SpanRecord

SYSTEM = "autogen"
HANDOFF_PREFIX = "transfer_to_"
#: The description AutoGen gives a `Handoff` that has none of its own; it keeps the target's case.
_HANDOFF_DESCRIPTION = re.compile(r"Handoff to (.+)\.")


class AutoGenConvention(Convention):
    name = "autogen"
    run_start_names: tuple[str, ...] = ("invoke_agent",)
    run_start_markers: tuple[tuple[str, str | None], ...] = ()
    # No AutoGen span encloses a Swarm's agents: the agent handed to starts its run once the
    # handing agent's run has ended, under another of the runtime's message spans.
    handoff_start_names: tuple[str, ...] = (f"execute_tool {HANDOFF_PREFIX}",)

    detection_values = (GEN_AI_SYSTEM,)

    def detect(self, span: SpanRecord) -> bool:
        return span.attributes.get(GEN_AI_SYSTEM) == SYSTEM

    role = staticmethod(genai.operation_role)
    run_content = staticmethod(genai.run_content)
    tool_call = staticmethod(genai.tool_call)
    model_call = staticmethod(genai.model_call)
    documents = staticmethod(genai.documents)

    def internal_tool(self, span: SpanRecord) -> bool:
        return self.handoff_target(span) is not None

    def handoff_target(self, span: SpanRecord) -> str | None:
        if genai.operation_role(span) != "tool":
            return None
        attributes = span.attributes
        return handoff_target(attributes.get(GEN_AI_TOOL_NAME), attributes.get(GEN_AI_TOOL_DESCRIPTION))


def handoff_target(tool_name: object, description: object) -> str | None:
    """The agent a Swarm handoff tool passes the conversation to: from AutoGen's default
    description (the target as named), else from the tool's name (lower-cased by AutoGen);
    None for any other tool."""
    tool = as_str(tool_name) or ""
    if not tool.startswith(HANDOFF_PREFIX):
        return None
    described = _HANDOFF_DESCRIPTION.fullmatch(as_str(description) or "")
    return described.group(1) if described else tool[len(HANDOFF_PREFIX) :] or None


def default_handoff_target(tool_name: object, description: object) -> str | None:
    """The agent a handoff tool passes the conversation to, when the tool is AutoGen's by its
    default description for that name (`transfer_to_{target}` described `Handoff to {Target}.`):
    a tool of another framework named alike (the OpenAI Agents SDK's) is described otherwise.
    Read so under any scope; None for any other tool."""
    tool = as_str(tool_name) or ""
    if not tool.startswith(HANDOFF_PREFIX):
        return None
    described = _HANDOFF_DESCRIPTION.fullmatch(as_str(description) or "")
    if described is None or described.group(1).lower() != tool[len(HANDOFF_PREFIX) :]:
        return None
    return described.group(1)


def function_results(items: Mapping[int, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The tool results of a `function` message as OpenInference's AgentChat instrumentation
    flattens it (`function.{k}` = JSON `{name, content, call_id, is_error}`), as
    `tool_call_response` parts (`formats.autogen.result_part`): a failed one is the only sign of
    the failure, the instrumentation's TOOL span stays OK."""
    parts: list[dict[str, Any]] = []
    for item in items.values():
        result = decode_json(item.get(""))
        if isinstance(result, Mapping):
            parts.append(result_part(result))
    return parts
