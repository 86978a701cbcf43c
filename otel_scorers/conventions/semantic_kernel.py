"""Semantic Kernel's built-in GenAI diagnostics (instrumentation scopes `semantic_kernel.*`).

With `SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS(_SENSITIVE)` Semantic Kernel
writes GenAI `invoke_agent {agent}`, `chat {model}` and `execute_tool {plugin}-{function}`
spans; the run span's `gen_ai.input.messages` / `gen_ai.output.messages` (sensitive mode only)
hold its messages in Semantic Kernel's own `{role, content, name}` shape, while the model spans'
content goes to log records, not spans. Semantic Kernel-specific: the model calls a function by
its plugin-qualified name, `{plugin}-{function}`, which is read as the function's name; and the
arguments of a function an agent calls carry the agent's `instructions_override` (null unless
set), which the model did not ask for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from otel_scorers.conventions import genai
from otel_scorers.conventions.base import Convention
from otel_scorers.conventions.genai import OPERATION
from otel_scorers.model import ToolCall, ToolDefinition
from otel_scorers.span_record import SpanRecord

SCOPE_PREFIX = "semantic_kernel."
#: What a ChatCompletionAgent adds to the arguments of every function it calls.
_AGENT_ARGUMENT = "instructions_override"


class SemanticKernelConvention(Convention):
    name = "semantic_kernel"
    run_start_names: tuple[str, ...] = ("invoke_agent",)
    run_start_markers: tuple[tuple[str, str | None], ...] = ()

    def detect(self, span: SpanRecord) -> bool:
        scope = span.scope
        return scope is not None and scope.startswith(SCOPE_PREFIX) and OPERATION in span.attributes

    role = staticmethod(genai.operation_role)
    run_content = staticmethod(genai.run_content)
    model_call = staticmethod(genai.model_call)
    documents = staticmethod(genai.documents)

    def tool_call(self, span: SpanRecord) -> ToolCall:
        call = genai.tool_call(span)
        name = function_name(call.name)
        arguments = call.arguments
        if isinstance(arguments, Mapping) and arguments.get(_AGENT_ARGUMENT, "") is None:
            arguments = {key: value for key, value in arguments.items() if key != _AGENT_ARGUMENT}
        return replace(call, name=name, arguments=arguments)

    def tool_definitions(self, span: SpanRecord) -> tuple[ToolDefinition, ...]:
        """Declared by their plugin-qualified names, read as the calls are: by function name."""
        return tuple(replace(tool, name=function_name(tool.name)) for tool in super().tool_definitions(span))


def function_name(qualified: str) -> str:
    """`{plugin}-{function}` -> `{function}` (a name without a plugin stays as it is)."""
    _, dash, function = qualified.partition("-")
    return function if dash and function else qualified
