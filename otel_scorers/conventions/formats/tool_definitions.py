"""The tools a model was offered, as instrumentations declare them on agent and model spans.

- GenAI `gen_ai.tool.definitions`: a JSON array of `{"type": "function", "name", "description",
  "parameters"}` (Pydantic AI, Google ADK, OpenLLMetry, AutoGen), of OpenAI's chat shape
  `{"type": "function", "function": {"name", "parameters"}}` (Semantic Kernel), with the schema
  under `inputSchema` (the Vercel AI SDK), or of bare names (Mastra: no schemas);
- OpenInference `llm.tools.<i>.tool.json_schema`: one tool each, in OpenAI's chat shape;
- the Vercel AI SDK's `ai.prompt.tools`: an array of JSON strings, one tool each.

A declaration is read once per distinct text (the same one repeats on every model call and run):
its tools are cached, so reading a run's declarations costs a few key lookups per span.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from otel_scorers.gen_ai_names import GEN_AI_TOOL_DEFINITIONS
from otel_scorers.model import ToolDefinition

GENAI_DEFINITIONS = GEN_AI_TOOL_DEFINITIONS
OPENINFERENCE_TOOL = "llm.tools.{}.tool.json_schema"
_FIRST_OPENINFERENCE_TOOL = OPENINFERENCE_TOOL.format(0)
VERCEL_PROMPT_TOOLS = "ai.prompt.tools"
#: Most tools read from one span's OpenInference list, and longest declaration read: a trace is
#: untrusted input, and nothing larger is a real tool list.
MAX_TOOLS = 256
MAX_DECLARATION_CHARS = 1_000_000
#: The schema keys of a declared tool, in the order they are looked for.
_SCHEMA_KEYS = ("parameters", "inputSchema", "input_schema", "parameters_json_schema")


def span_tool_definitions(attributes: Mapping[str, Any]) -> tuple[ToolDefinition, ...]:
    """Every tool declared on one span, in the order declared (empty when it declares none)."""
    found: tuple[ToolDefinition, ...] = ()
    value = attributes.get(GENAI_DEFINITIONS)
    if value is not None:
        found = _declared(value, GENAI_DEFINITIONS)
    first = attributes.get(_FIRST_OPENINFERENCE_TOOL)
    if first is not None:
        tools = list(found)
        for index in range(MAX_TOOLS):
            item = first if index == 0 else attributes.get(OPENINFERENCE_TOOL.format(index))
            if item is None:
                break
            tools.extend(_declared(item, "llm.tools"))
        found = tuple(tools)
    value = attributes.get(VERCEL_PROMPT_TOOLS)
    if value is not None and not isinstance(value, (str, bytes)):  # an array of JSON strings
        tools = list(found)
        for item in list(value)[:MAX_TOOLS]:
            tools.extend(_declared(item, VERCEL_PROMPT_TOOLS))
        found = tuple(tools)
    elif value is not None:
        found = (*found, *_declared(value, VERCEL_PROMPT_TOOLS))
    return found


def merge(declarations: Iterable[tuple[ToolDefinition, ...]]) -> tuple[ToolDefinition, ...]:
    """One definition per tool name, the first that has a schema (else the first), in the order
    first declared."""
    by_name: dict[str, ToolDefinition] = {}
    for tools in declarations:
        for tool in tools:
            known = by_name.get(tool.name)
            if known is None or (known.parameters is None and tool.parameters is not None):
                by_name[tool.name] = tool
    return tuple(by_name.values())


def _declared(value: Any, source: str) -> tuple[ToolDefinition, ...]:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        if len(value) > MAX_DECLARATION_CHARS:
            return ()
        return _parsed(value, source) if len(value) <= _CACHED_CHARS else _parse(value, source)
    return _tools(value, source)


#: Declarations up to this long are remembered (256 of them: at most 16 MB), longer ones read each time.
_CACHED_CHARS = 65_536


@functools.lru_cache(maxsize=256)
def _parsed(text: str, source: str) -> tuple[ToolDefinition, ...]:
    return _parse(text, source)


def _parse(text: str, source: str) -> tuple[ToolDefinition, ...]:
    try:
        decoded = orjson.loads(text)
    except orjson.JSONDecodeError:
        return ()
    return _tools(decoded, source)


def _tools(decoded: Any, source: str) -> tuple[ToolDefinition, ...]:
    items = decoded if isinstance(decoded, (list, tuple)) else [decoded]
    tools = []
    for item in items[:MAX_TOOLS]:
        tool = _tool(item, source)
        if tool is not None:
            tools.append(tool)
    return tuple(tools)


def _tool(item: Any, source: str) -> ToolDefinition | None:
    if isinstance(item, str):
        return ToolDefinition(item, None, source) if item else None
    if not isinstance(item, Mapping):
        return None
    function = item.get("function")
    if isinstance(function, Mapping) and "name" in function:  # OpenAI's chat shape
        item = function
    name = item.get("name")
    if not isinstance(name, str) or not name:
        return None
    for key in _SCHEMA_KEYS:
        schema = item.get(key)
        if isinstance(schema, Mapping):
            return ToolDefinition(name, schema, source)
        if isinstance(schema, bool):  # `true` (anything) and `false` (nothing) are schemas too
            return ToolDefinition(name, schema, source)
    return ToolDefinition(name, None, source)
