"""A stream crafted to open many long chains of model calls: each OTLP request one trace holding
one model call (as OpenLIT writes an OpenAI chat call: no run span, a trace per call), each call
of a conversation sending back the results of every tool the conversation asked for and asking
for one more, so that no chain ever completes; and traces of plain HTTP and database work."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

SCOPE = "openlit.instrumentation.openai"
START_NS = 1_700_000_000_000_000_000


def _kv(key: str, value: str | int) -> KeyValue:
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


def _request(spans: list[tuple[str, Span]]) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    resource.resource.attributes.append(_kv("service.name", "chain-stream"))
    for scope, span in spans:
        scope_spans = resource.scope_spans.add()
        scope_spans.scope.name = scope
        scope_spans.spans.append(span)
    return request


def _ids(conversation: int, step: int) -> tuple[bytes, bytes]:
    number = conversation * 100_000 + step + 1
    return number.to_bytes(16, "big"), number.to_bytes(8, "big")


def _text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def chain_call(conversation: int, step: int, padding: int) -> ExportTraceServiceRequest:
    """The `step`th model call of `conversation`, in a trace of its own: its request the user's
    message (`padding` characters) and the results of the tools asked for at the steps before,
    its answer asking for one more tool."""
    request = [_text("user", f"conversation {conversation}: " + "x" * padding)]
    for earlier in range(step):
        call_id = f"call_{conversation}_{earlier}"
        request.append(
            {
                "role": "assistant",
                "parts": [{"type": "tool_call", "id": call_id, "name": "lookup", "arguments": {}}],
            }
        )
        request.append(
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": "found"}]}
        )
    answer = [
        {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "id": f"call_{conversation}_{step}", "name": "lookup", "arguments": {}}
            ],
            "finish_reason": "tool_call",
        }
    ]
    trace_id, span_id = _ids(conversation, step)
    start = START_NS + step * 10_000_000_000 + conversation * 1_000_000
    span = Span(
        trace_id=trace_id,
        span_id=span_id,
        name="chat gpt-4o-mini",
        kind=Span.SPAN_KIND_CLIENT,
        start_time_unix_nano=start,
        end_time_unix_nano=start + 500_000,
    )
    span.attributes.extend(
        [
            _kv("gen_ai.operation.name", "chat"),
            _kv("gen_ai.provider.name", "openai"),
            _kv("gen_ai.request.model", "gpt-4o-mini"),
            _kv("gen_ai.input.messages", json.dumps(request)),
            _kv("gen_ai.output.messages", json.dumps(answer)),
        ]
    )
    return _request([(SCOPE, span)])


def plain_trace(number: int) -> ExportTraceServiceRequest:
    """A trace of an application's plain work: an HTTP server span and a database query in it."""
    trace_id = (10**12 + number).to_bytes(16, "big")
    start = START_NS + number * 1_000_000
    server = Span(trace_id=trace_id, span_id=(2 * number + 1).to_bytes(8, "big"), name="GET /orders")
    server.kind = Span.SPAN_KIND_SERVER
    server.start_time_unix_nano, server.end_time_unix_nano = start, start + 3_000_000
    server.attributes.extend(
        [
            _kv("http.request.method", "GET"),
            _kv("url.path", "/orders"),
            _kv("http.route", "/orders"),
            _kv("http.response.status_code", 200),
            _kv("server.address", "shop.example"),
        ]
    )
    query = Span(
        trace_id=trace_id,
        span_id=(2 * number + 2).to_bytes(8, "big"),
        parent_span_id=server.span_id,
        name="SELECT orders",
    )
    query.kind = Span.SPAN_KIND_CLIENT
    query.start_time_unix_nano, query.end_time_unix_nano = start + 1_000_000, start + 2_000_000
    query.attributes.extend(
        [
            _kv("db.system.name", "postgresql"),
            _kv("db.query.text", "SELECT id, total FROM orders WHERE customer = $1"),
            _kv("db.namespace", "shop"),
        ]
    )
    return _request(
        [("opentelemetry.instrumentation.fastapi", server), ("opentelemetry.instrumentation.asyncpg", query)]
    )
