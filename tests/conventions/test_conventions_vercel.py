"""Vercel AI SDK `ai.*` spans: runs, model steps and tool calls; JSON-stringified values; AI SDK 4
and 5+ token names; tool calls under the step (LegacyOpenTelemetry) or beside it (AI SDK 6)."""

from __future__ import annotations

import json
from typing import Any

from otel_scorers import ScoringSpanProcessor
from otel_scorers.conventions import may_start_run
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanEvent, SpanRecord
from tests.conftest import RunRecorder, Telemetry
from tests.spans import only_run, span


def ai(operation: str, parent: SpanRecord | None = None, **attributes: Any) -> SpanRecord:
    return span(
        operation,
        parent,
        scope="ai",
        **{"ai.operationId": operation, "ai.telemetry.functionId": "weather-agent", **attributes},
    )


def step(
    parent: SpanRecord, messages: list[dict[str, Any]], text: str | None, calls: Any = None
) -> SpanRecord:
    attributes: dict[str, Any] = {"ai.prompt.messages": json.dumps(messages), "ai.model.id": "mock-model"}
    if text is not None:
        attributes["ai.response.text"] = text
    if calls is not None:
        attributes["ai.response.toolCalls"] = json.dumps(calls)
    return ai("ai.generateText.doGenerate", parent, **attributes)


def tool(parent: SpanRecord, call_id: str, args: str, result: str | None, **extra: Any) -> SpanRecord:
    attributes: dict[str, Any] = {
        "ai.toolCall.name": "get_weather",
        "ai.toolCall.id": call_id,
        "ai.toolCall.args": args,
    }
    if result is not None:
        attributes["ai.toolCall.result"] = result
    return ai("ai.toolCall", parent, **attributes, **extra)


USER = {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}
CALL = {"toolCallId": "c1", "toolName": "get_weather", "input": '{"city":"Paris"}'}


def test_generate_text_run_reads_prompt_answer_and_decodes_stringified_tool_values() -> None:
    run_span = ai(
        "ai.generateText",
        **{
            "ai.prompt": json.dumps({"system": "Be brief.", "prompt": "Weather in Paris?"}),
            "ai.response.text": "It is sunny.",
            "ai.usage.inputTokens": 84,
            "ai.usage.outputTokens": 24,
        },
    )
    first = step(run_span, [USER], "", [CALL])
    call = tool(run_span, "c1", '{"city":"Paris"}', '"Sunny, 21°C"')
    second = step(run_span, [USER], "It is sunny.")
    run = only_run([run_span, first, call, second])
    assert (run.convention, run.agent_name, run.input, run.output) == (
        "vercel-ai",
        "weather-agent",
        "Weather in Paris?",
        "It is sunny.",
    )
    (made,) = run.tool_calls
    assert (made.name, made.call_id, made.arguments, made.result) == (
        "get_weather",
        "c1",
        {"city": "Paris"},
        "Sunny, 21°C",
    )
    # The run span's aggregate wins over the sum of the steps'.
    assert (run.usage.input_tokens, run.usage.output_tokens) == (84, 24)
    assert run.models == ("mock-model",)


def test_a_number_result_decodes_and_ai_sdk_4_token_names_are_read() -> None:
    run_span = ai(
        "ai.generateText",
        **{
            "ai.prompt": json.dumps({"messages": [USER]}),
            "ai.usage.promptTokens": 5,
            "ai.usage.completionTokens": 2,
        },
    )
    run = only_run([run_span, tool(run_span, "c1", "{}", "42")])
    assert run.tool_calls[0].result == 42
    assert run.input == "Weather in Paris?"
    assert (run.usage.input_tokens, run.usage.output_tokens) == (5, 2)


def test_a_failed_tool_is_an_error_without_result() -> None:
    run_span = ai(
        "ai.generateText", **{"ai.prompt": json.dumps({"prompt": "Weather?"}), "ai.response.text": "Sorry."}
    )
    failed = tool(
        run_span,
        "c1",
        '{"city":"Paris"}',
        None,
        status="error",
        status_message="weather service unavailable",
        events=(SpanEvent("exception", 1, {"exception.message": "weather service unavailable"}),),
    )
    (call,) = only_run([run_span, failed]).tool_calls
    assert (call.state, call.result, call.error) == ("error", None, "weather service unavailable")


def test_without_recorded_inputs_and_outputs_the_text_is_missing() -> None:
    run_span = ai("ai.generateText", **{"ai.usage.inputTokens": 1})
    model = ai("ai.generateText.doGenerate", run_span, **{"ai.usage.inputTokens": 1})
    run = only_run([run_span, model, tool(run_span, "c1", "{}", None)])
    assert run.input is None and run.output is None and {"input", "output"} <= run.missing


def test_legacy_tool_calls_under_the_step_and_a_nested_generate_text_run() -> None:
    outer = ai(
        "ai.streamText",
        **{"ai.prompt": json.dumps({"messages": [USER]}), "ai.response.text": "No umbrella."},
    )
    first = ai(
        "ai.streamText.doStream",
        outer,
        **{
            "ai.response.toolCalls": json.dumps(
                [{**CALL, "toolName": "ask_weather_agent", "input": {"q": "Paris"}}]
            )
        },
    )
    delegate = ai(
        "ai.toolCall",
        first,
        **{
            "ai.toolCall.name": "ask_weather_agent",
            "ai.toolCall.id": "c1",
            "ai.toolCall.args": '{"q":"Paris"}',
        },
    )
    inner = ai(
        "ai.generateText",
        delegate,
        **{"ai.prompt": json.dumps({"prompt": "Paris?"}), "ai.response.text": "Sunny."},
    )
    outer_run, inner_run = build_runs([outer, first, delegate, inner])
    assert [call.name for call in outer_run.tool_calls] == ["ask_weather_agent"]
    assert (inner_run.input, inner_run.output, inner_run.tool_calls) == ("Paris?", "Sunny.", ())


def test_a_requested_call_without_a_tool_span_is_incomplete() -> None:
    run_span = ai("ai.generateText", **{"ai.prompt": json.dumps({"prompt": "Weather?"})})
    run = only_run([run_span, step(run_span, [USER], "", [CALL])])
    (call,) = run.tool_calls
    assert (call.name, call.state, call.arguments) == ("get_weather", "incomplete", {"city": "Paris"})


def test_in_process_a_generate_text_run_is_buffered_from_its_start_and_scored(telemetry: Telemetry) -> None:
    """The real SDK and processor: `ai.generateText` is spotted by its name when it starts."""
    recorder = RunRecorder()
    seen = recorder.runs

    processor = ScoringSpanProcessor([recorder], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    tracer = telemetry.tracer_provider.get_tracer("ai")
    with tracer.start_as_current_span("ai.generateText") as run_span:
        with tracer.start_as_current_span("ai.toolCall") as tool_span:
            tool_span.set_attributes(
                {
                    "ai.operationId": "ai.toolCall",
                    "ai.toolCall.name": "get_weather",
                    "ai.toolCall.id": "c1",
                    "ai.toolCall.args": '{"city":"Paris"}',
                    "ai.toolCall.result": '"Sunny"',
                }
            )
        run_span.set_attributes(
            {
                "ai.operationId": "ai.generateText",
                "ai.telemetry.functionId": "weather-agent",
                "ai.prompt": json.dumps({"prompt": "Weather in Paris?"}),
                "ai.response.text": "Sunny.",
            }
        )
    assert processor.force_flush(5000)
    (run,) = seen
    assert (run.convention, run.agent_name, run.input, run.output) == (
        "vercel-ai",
        "weather-agent",
        "Weather in Paris?",
        "Sunny.",
    )
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny")
    ]
    processor.shutdown()


def test_run_spans_are_spotted_by_name_or_operation_id() -> None:
    assert may_start_run("ai.streamText", {})
    assert may_start_run("generate", {"ai.operationId": "ai.generateObject"})
    assert not may_start_run("tool", {"ai.operationId": "ai.toolCall"})
