"""What the Model Context Protocol is, as any instrumentation records it: a `tools/call` request.

MCP is JSON-RPC. A span that records a client's or a server's `tools/call` says so by its method,
`mcp.method.name` (OpenTelemetry's MCP semantic conventions) or `rpc.method` (the RPC ones, with
`rpc.system = jsonrpc`, as Logfire writes); its span name is `{method} {tool}` (behind a prefix
of the instrumentation's own, `MCP request: tools/call get_weather`). What it recorded of the
exchange may be the request (`{"method": "tools/call", "params": {"name", "arguments"}}`) and
the `CallToolResult` (`{"content": [...], "structuredContent", "isError"}`), under whichever key
the instrumentation keeps them: they are found by what they are. A tool that failed returns a
successful JSON-RPC response with `isError: true`: nothing else on the span may say so.
A tracer of MCP's Python SDK (OpenLIT's) records the SDK's method instead, `call_tool` under
`mcp.method`, with its arguments as `{"method": "call_tool", "params": {"args": [tool, arguments]}}`
and the result's content items as the SDK objects' `str()`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import (
    as_str,
    decode_content,
    is_mapping,
    span_failed,
    span_tool_call,
    tool_state,
)
from otel_scorers.conventions.formats.python_repr import decoded_value, object_fields
from otel_scorers.gen_ai_names import (
    GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_CALL_RESULT,
    GEN_AI_TOOL_NAME,
)
from otel_scorers.model import ToolCall
from otel_scorers.span_record import SpanRecord

MCP_METHOD = "mcp.method.name"
RPC_METHOD = "rpc.method"
#: The method of MCP's Python SDK a tracer of its client session wrapped (OpenLIT's MCP
#: instrumentation: `call_tool`, `list_tools`, `send_request`), where the conventions name the
#: protocol's method.
SDK_METHOD = "mcp.method"
TOOLS_CALL = "tools/call"
#: `ClientSession.call_tool(name, arguments)`, the SDK's method that sends a `tools/call`.
SDK_CALL_TOOL = "call_tool"
#: The SDK's methods that send a `tools/call`, as `SDK_METHOD` names them.
SDK_TOOLS_CALL = (SDK_CALL_TOOL, TOOLS_CALL)
#: The keys that mark a span of MCP's protocol by their presence alone (OpenTelemetry's MCP
#: method and JSON-RPC request id, the RPC conventions' JSON-RPC version): which method it records
#: is read of each span (its role), so that no value is compared to tell whose span it is.
PROTOCOL_KEYS = frozenset({MCP_METHOD, "jsonrpc.request.id", "rpc.jsonrpc.version"})


def is_protocol_span(span: SpanRecord) -> bool:
    """The span records a request of MCP's protocol (JSON-RPC's, which MCP is), or is a tracer's
    span of the SDK method that sends a `tools/call` (its other methods' spans, a session's
    set-up and listings, are no part of a run: not claimed, they cost nothing more)."""
    attributes = span.attributes
    return not PROTOCOL_KEYS.isdisjoint(attributes) or (
        SDK_METHOD in attributes and attributes[SDK_METHOD] in SDK_TOOLS_CALL
    )


#: A recorded value longer than this is not decoded to look for the exchange in it (bounded work
#: per span: a tool's whole result may be large, and the call's failure is known without it).
_MAX_DECODED = 64_000


def records_tools_call(attributes: Mapping[str, Any]) -> bool:
    """The span records an MCP `tools/call`, by its method under either convention's key, or by
    the SDK's method that sends it."""
    return (
        attributes.get(MCP_METHOD) == TOOLS_CALL
        or attributes.get(RPC_METHOD) == TOOLS_CALL
        or attributes.get(SDK_METHOD) in SDK_TOOLS_CALL
    )


def tool_named(span_name: str) -> str | None:
    """The tool the span's name names after `tools/call `, None when it names none."""
    _, found, tool = span_name.partition(TOOLS_CALL + " ")
    return tool.strip() or None if found else None


def recorded_exchange(
    attributes: Mapping[str, Any],
) -> tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]:
    """The `tools/call` request's `params` and the `CallToolResult` the span recorded, each None
    when no attribute holds it."""
    params: Mapping[str, Any] | None = None
    result: Mapping[str, Any] | None = None
    for value in attributes.values():
        if params is not None and result is not None:
            break
        # Only JSON objects may be either; the substring checks spare decoding every other value.
        if type(value) is not str or not value.startswith("{") or len(value) > _MAX_DECODED:
            continue
        wants_params = params is None and (
            '"' + TOOLS_CALL + '"' in value or '"' + SDK_CALL_TOOL + '"' in value
        )
        wants_result = result is None and '"isError"' in value
        if not (wants_params or wants_result):
            continue
        decoded = decode_json(value)
        if not is_mapping(decoded):
            continue
        if wants_params and decoded.get("method") == TOOLS_CALL:
            found = decoded.get("params")
            params = found if is_mapping(found) else None
        elif wants_params and decoded.get("method") == SDK_CALL_TOOL:
            params = _sdk_call_params(decoded.get("params"))
        elif wants_result and "content" in decoded:
            result = decoded
    return params, result


def _sdk_call_params(recorded: Any) -> Mapping[str, Any] | None:
    """The `tools/call` params of a recorded `ClientSession.call_tool(name, arguments)`, whose
    positional arguments a tracer keeps as `{"args": [name, arguments]}`; None for another shape
    (a call that names no tool: the server's handler, given none)."""
    args = recorded.get("args") if is_mapping(recorded) else None
    if not isinstance(args, list) or not args or not isinstance(args[0], str):
        return None
    return {"name": args[0], "arguments": args[1] if len(args) > 1 else None}


def _content_item(item: Any) -> Any:
    """A content item as MCP sends it: a mapping, also when a tracer wrote the SDK's pydantic
    object as its `str()` (`type='text' text='...' annotations=None meta=None`)."""
    if isinstance(item, str):
        fields = object_fields(item)
        return fields if fields is not None and "type" in fields else item
    return item


def result_value(result: Mapping[str, Any]) -> Any:
    """What the tool returned: the text of a result of one text item (decoded when it is JSON: a
    tool returning an object is sent it as JSON text), else its structured content, else its
    content items."""
    content = result.get("content")
    if isinstance(content, list) and len(content) == 1:
        item = _content_item(content[0])
        if is_mapping(item) and item.get("type") == "text" and isinstance(item.get("text"), str):
            return decode_content(item["text"])
    structured = result.get("structuredContent")
    return structured if structured is not None else content


def failure_text(result: Mapping[str, Any]) -> str | None:
    """The failure a `CallToolResult` reports (`isError`), as the text of its content; None when
    the call did not fail."""
    if result.get("isError") is not True:
        return None
    return _content_text(result) or "error"


def _content_text(result: Mapping[str, Any]) -> str:
    content = result.get("content")
    items = [_content_item(item) for item in content] if isinstance(content, list) else []
    texts = [item["text"] for item in items if is_mapping(item) and isinstance(item.get("text"), str)]
    return "\n".join(texts)


#: What a tool response of content items holds besides them: MCP's `CallToolResult`, and the
#: frameworks' responses of the same shape (AgentScope's `ToolResponse`: `state`, `metadata`, `id`).
_RESPONSE_KEYS = frozenset(
    {"content", "structuredContent", "isError", "_meta", "meta", "state", "metadata", "id", "is_last"}
)


def content_response(value: Any) -> tuple[Any, str | None] | None:
    """(what the tool returned, its failure or None) of a tool result that is a response of typed
    content items (`{"content": [{"type": "text", "text": ...}], ...}`), whichever tool wrote it:
    failed when it says so (`isError: true`, or `state: "error"`). None for any other value."""
    if not is_mapping(value) or not set(value) <= _RESPONSE_KEYS:
        return None
    content = value.get("content")
    if not isinstance(content, list) or not content:
        return None
    items = [_content_item(item) for item in content]
    if not all(is_mapping(item) and isinstance(item.get("type"), str) for item in items):
        return None
    failure = failure_text(value)
    if failure is None and value.get("state") == "error":
        failure = _content_text(value) or "error"
    return result_value(value), failure


def text_parts_value(value: list[Any]) -> Any:
    """What a tool returned when its result was written as message parts of text (the GenAI
    conventions' `[{"type": "text", "content": ...}]`; the providers' and MCP's content items,
    `[{"type": "text", "text": ...}]`): their text, decoded when it is JSON (a tool returning an
    object is sent it as JSON text) or a Python repr of data; `value` itself when any item is
    another."""
    texts = [text for item in value if (text := _part_text(item)) is not None]
    if not texts or len(texts) != len(value):
        return value
    decoded = decode_json("".join(texts))
    return decoded_value(decoded) if isinstance(decoded, str) else decoded


def _part_text(item: Any) -> str | None:
    """The text of a message part of text, in the GenAI conventions' `content` or the `text`
    of a provider's or MCP's item; None for any other item."""
    if not is_mapping(item) or item.get("type") != "text":
        return None
    text = item.get("content")
    if not isinstance(text, str):
        text = item.get("text")
    return text if isinstance(text, str) else None


def execution_failure(span: SpanRecord) -> str | None:
    """The failure of the call a `tools/call` span executed, as `tool_call` reads it (its span's
    status or events, else the `CallToolResult`'s `isError`), without reading what it returned:
    a framework's tool span holds that, and asks its execution only whether it failed."""
    if not span.ended:
        return None
    failure = span_failed(span)
    if failure is not None:
        return failure
    _, result = recorded_exchange(span.attributes)
    return failure_text(result) if result is not None else None


def tool_call(span: SpanRecord) -> ToolCall:
    """The call a span recording an MCP `tools/call` made: the tool and arguments the GenAI keys
    name, else the request's; what it returned, and a failure its `CallToolResult` reports
    (`isError`), though the span's status says nothing of it."""
    attributes = span.attributes
    params, result = recorded_exchange(attributes)
    name = (
        as_str(attributes.get(GEN_AI_TOOL_NAME))
        or (as_str(params.get("name")) if params is not None else None)
        or tool_named(span.name)
        or span.name
    )
    arguments = decode_content(
        attributes.get(GEN_AI_TOOL_CALL_ARGUMENTS, params.get("arguments") if params is not None else None)
    )
    if GEN_AI_TOOL_CALL_RESULT in attributes:
        value = decode_content(attributes[GEN_AI_TOOL_CALL_RESULT])
    else:
        value = result_value(result) if result is not None else None
    state, error = tool_state(span, value)
    failure = failure_text(result) if result is not None else None
    if failure is not None and state in ("ok", "result_error"):
        state, error = "error", failure
    return span_tool_call(
        span,
        name=name,
        call_id=as_str(attributes.get(GEN_AI_TOOL_CALL_ID)),
        arguments=arguments,
        result=value,
        state=state,
        error=error,
    )
