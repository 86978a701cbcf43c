"""Semantic Kernel's built-in GenAI diagnostics (instrumentation scopes `semantic_kernel.*`).

With `SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS(_SENSITIVE)` Semantic Kernel
writes GenAI `invoke_agent {agent}`, `chat {model}` and `execute_tool {plugin}-{function}`
spans; the run span's `gen_ai.input.messages` / `gen_ai.output.messages` (sensitive mode only)
hold its messages in Semantic Kernel's own `{role, content, name}` shape, while the model spans'
content goes to log records, not spans. They are read as GenAI spans. What Semantic Kernel does
under every instrumentation (functions named `{plugin}-{function}`, the `instructions_override`
its agents add to their calls) is in the table of frameworks (`conventions.frameworks`), read
whichever reader claimed the span.
"""

from __future__ import annotations

from otel_scorers.conventions import genai
from otel_scorers.conventions.base import Convention
from otel_scorers.conventions.genai import OPERATION
from otel_scorers.span_record import SpanRecord

SCOPE_PREFIX = "semantic_kernel."


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
    tool_call = staticmethod(genai.tool_call)
