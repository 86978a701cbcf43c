"""A framework's listing of a server's tools, which some instrumentations trace as a tool call:
no call of the run, no work (`Framework.listing_tools`)."""

from __future__ import annotations

from collections.abc import Callable

from otel_scorers.conventions.frameworks import FRAMEWORKS, framework_marking, scope_framework
from otel_scorers.gen_ai_names import GEN_AI_TOOL_NAME
from otel_scorers.model import ToolCall
from otel_scorers.span_record import SpanRecord

#: Every listed framework's listing tools, by name.
_LISTING_TOOLS = frozenset(name for f in FRAMEWORKS.values() for name in f.listing_tools)
#: Where an OpenInference tool span keeps its tool's name (GenAI's: `gen_ai.tool.name`).
_OPENINFERENCE_TOOL_NAME = "tool.name"


def lists_tools(span: SpanRecord, read_call: Callable[[SpanRecord], ToolCall]) -> bool:
    """The tool span is its framework's listing of a server's tools, not a tool call
    (`Framework.listing_tools`); `read_call`, its reader's, is asked only of a framework that
    lists tools. Asked of every tool span: a framework's marks are looked for only on a span
    named as a listing is."""
    framework = scope_framework(span.scope)
    if framework is None:
        # Under a scope naming no listed framework, a listing is known by its name, which is
        # the framework's own (`mcp_list_tools`), where a tool span keeps its tool's name, and
        # by taking no arguments (a tool of that name given arguments ran). Most tool spans are
        # of no listed framework: two lookups, not a walk of their values.
        attributes = span.attributes
        if (
            attributes.get(GEN_AI_TOOL_NAME) not in _LISTING_TOOLS
            and attributes.get(_OPENINFERENCE_TOOL_NAME) not in _LISTING_TOOLS
            and span.name not in _LISTING_TOOLS
        ):
            return False
        framework = framework_marking(span)  # a span a framework's marks claim is its own
        if framework is None:
            call = read_call(span)
            return call.name in _LISTING_TOOLS and not call.arguments
    if not framework.listing_tools:
        return False
    listing = framework.listing_tools
    # Reading the call decodes its arguments and result: first, the name anywhere on the span.
    if span.name not in listing and not any(
        type(value) is str and value in listing for value in span.attributes.values()
    ):
        return False
    return read_call(span).name in listing
