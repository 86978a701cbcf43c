"""An agent run written back as a trace in the GenAI semantic conventions, one OTLP/JSON
`ExportTraceServiceRequest` (the line format of the Collector's file exporter, which `score`
reads): an `invoke_agent` span with the run's ids, times, status, agent, conversation id, model,
input and output messages, and an `execute_tool` child span per tool call with its arguments,
result and state. Read again, it rebuilds the same run for every scorer that reads these.

What is not carried: the run's other spans (model calls, retrievals: its `context`), and the run
span's own attributes unless the run was read by the GenAI conventions (another instrumentation's
attributes would make its reader claim the span)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

from otel_scorers.conventions.formats.bounded_json import within_depth
from otel_scorers.model import AgentRun, ToolCall

_SCOPE = "otel-scorers.kept-runs"
_INTERNAL = 1
_ERROR = 2


def _value(value: Any) -> dict[str, Any]:
    """An attribute value in OTLP/JSON."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [_value(item) for item in value]}}
    if isinstance(value, str):
        return {"stringValue": value}
    return {"stringValue": orjson.dumps(within_depth(value), default=repr).decode()}


def _attributes(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in attributes.items() if value is not None]


def _content(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(within_depth(value), default=repr).decode()


def _messages(role: str, text: str | None, messages: tuple[Mapping[str, Any], ...]) -> str | None:
    if messages:
        return orjson.dumps(within_depth(list(messages)), default=repr).decode()
    if text is None:
        return None
    return orjson.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}]).decode()


def _child_id(run: AgentRun, index: int) -> str:
    """A tool span's id, the same each time the run is written."""
    return hashlib.blake2b(f"{run.span_id:016x}/{index}".encode(), digest_size=8).hexdigest()


def _tool_span(run: AgentRun, index: int, call: ToolCall) -> dict[str, Any]:
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.call_id,
        "gen_ai.tool.call.arguments": None if call.arguments is None else _content(call.arguments),
        "gen_ai.tool.call.result": None if call.result is None else _content(call.result),
    }
    start = call.start_ns if call.start_ns is not None else run.start_ns
    span: dict[str, Any] = {
        "traceId": run.trace_id_hex,
        "spanId": _child_id(run, index),
        "parentSpanId": run.span_id_hex,
        "name": f"execute_tool {call.name}",
        "kind": _INTERNAL,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(call.end_ns if call.end_ns is not None else start),
        "attributes": _attributes(attributes),
    }
    if call.failed:
        span["status"] = {"code": _ERROR, "message": call.error or call.state}
    return span


def run_trace(run: AgentRun) -> dict[str, Any]:
    """The run as an OTLP/JSON trace request."""
    own = dict(run.attributes) if run.convention == "genai" else {}
    attributes = {
        **{key: value for key, value in own.items() if not key.startswith("gen_ai.")},
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": run.agent_name,
        "gen_ai.conversation.id": run.conversation_id,
        "gen_ai.request.model": run.models[0] if run.models else None,
        "gen_ai.input.messages": _messages("user", run.input, run.input_messages),
        "gen_ai.output.messages": _messages("assistant", run.output, run.output_messages),
    }
    agent: dict[str, Any] = {
        "traceId": run.trace_id_hex,
        "spanId": run.span_id_hex,
        "name": f"invoke_agent {run.agent_name}" if run.agent_name else "invoke_agent",
        "kind": _INTERNAL,
        "startTimeUnixNano": str(run.start_ns),
        "endTimeUnixNano": str(run.end_ns),
        "attributes": _attributes(attributes),
    }
    if run.status == "error":
        agent["status"] = {"code": _ERROR}
    spans = [agent, *(_tool_span(run, index, call) for index, call in enumerate(run.tool_calls))]
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _attributes(run.resource)},
                "scopeSpans": [{"scope": {"name": _SCOPE}, "spans": spans}],
            }
        ]
    }


def run_trace_line(run: AgentRun) -> bytes:
    """The run's trace as one line of the file."""
    return orjson.dumps(run_trace(run), default=repr) + b"\n"
