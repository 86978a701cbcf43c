"""A tool run through MCP is one tool call of the run, read as MCP says under any instrumentation:
a span recording a `tools/call` (by `mcp.method.name` or JSON-RPC's `rpc.method`, or the Python
SDK's `call_tool` by `mcp.method`), its request's
tool and arguments, and its `CallToolResult`, whose `isError` says the call failed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from otel_scorers.conventions import genai
from otel_scorers.runs.explain import explain_files
from otel_scorers.runs.otlp_files import read_spans
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanRecord
from tests.runs.fixture_runs import runs_of

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
#: What the MCP server's `get_weather` fails with in the failing_tool scenarios.
SERVER_FAILURE = "Error executing tool get_weather: weather service unavailable"


def spans_of(corpus: str, scenario: str) -> list[SpanRecord]:
    return list(read_spans(TRACES / corpus / f"{scenario}.json", []))


def test_a_tool_whose_mcp_call_reports_is_error_failed_though_no_span_status_says_so() -> None:
    # Logfire: the SDK's `Function: get_weather` span and the MCP client's `tools/call` span
    # inside it are OK; only the CallToolResult the client recorded says `isError: true`.
    (run,) = runs_of("logfire-mcp", "failing_tool")
    assert [(call.name, call.arguments, call.result, call.state, call.error) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, None, "error", SERVER_FAILURE)
    ]


def test_a_failure_the_mcp_server_span_records_below_the_client_span_fails_the_call() -> None:
    # OpenInference over the MCP SDK's own spans: the agent's TOOL span, the client's
    # `MCP send tools/call` inside it, the server's `tools/call` (`error.type`) inside that.
    (run,) = runs_of("mcp-openinference", "failing_tool")
    assert [(call.name, call.state) for call in run.tool_calls] == [("get_weather", "error")]


def test_a_failure_the_sdk_method_span_records_fails_the_call_whose_span_says_nothing_of_it() -> None:
    # OpenLIT: the OpenAI Agents SDK's `execute_tool get_weather` holds the failure text as a
    # result; the MCP span inside it records the SDK's `call_tool` (`mcp.method`), not the
    # protocol's `tools/call`, and a CallToolResult of SDK objects' `str()` with `isError: true`.
    (run,) = runs_of("openlit-mcp", "failing_tool")
    assert [(call.name, call.arguments, call.state, call.error) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "error", SERVER_FAILURE)
    ]


def test_an_sdk_call_tool_span_names_the_tool_and_arguments_its_call_was_given() -> None:
    # The SDK method's call as OpenLIT records it: `{"method": "call_tool", "params": {"args":
    # [tool, arguments]}}`, read as the `tools/call` it sends.
    (span, *_) = [
        span
        for span in spans_of("openlit-mcp", "tool_then_answer")
        if span.name == "mcp tools/call" and "args" in str(span.attributes.get("mcp.request.payload"))
    ]
    call = genai.tool_call(span)
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris"})


def test_an_mcp_tools_call_span_with_no_framework_tool_span_around_it_is_the_runs_tool_call() -> None:
    # An agent calling its MCP client itself: the Logfire trace without the SDK's tool span, the
    # MCP client's span under the turn as that tool span was.
    spans = spans_of("logfire-mcp", "tool_then_answer")
    (function,) = [span for span in spans if span.name == "Function: {name}"]
    alone = [
        replace(span, parent_span_id=function.parent_span_id)
        if span.parent_span_id == function.span_id
        else span
        for span in spans
        if span is not function and span.trace_id == function.trace_id
    ]
    (run,) = build_runs(alone)
    assert [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok")
    ]


def test_a_trace_of_mcp_protocol_requests_alone_is_explained_as_an_mcp_session_not_an_unknown_agent() -> None:
    # Logfire's `MCP request: initialize` and the MCP SDK's `server/discover` start traces of
    # their own, before the agent runs.
    for corpus in ("logfire-mcp", "mcp-openinference"):
        reasons = [
            explanation.why_no_run()
            for explanation in explain_files([TRACES / corpus / "failing_tool.json"], [])
            if not explanation.runs
        ]
        assert reasons and all(
            reason is not None and reason.startswith("only MCP protocol") for reason in reasons
        )


def test_a_cut_or_overlong_call_tool_result_is_not_read_and_the_call_is_what_its_span_says() -> None:
    (client,) = [
        span
        for span in spans_of("logfire-mcp", "failing_tool")
        if span.name.startswith("MCP request: tools/call")
    ]
    response = client.attributes["response"]
    assert '"isError":true' in response
    for unread in (response[: len(response) // 2], response[:-1] + " " * 64_000 + "}"):
        call = genai.tool_call(replace(client, attributes={**client.attributes, "response": unread}))
        assert (call.name, call.arguments, call.result, call.state) == (
            "get_weather",
            {"city": "Paris"},
            None,
            "ok",
        )
