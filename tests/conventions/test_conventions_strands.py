"""Strands: content in span events (default mode with Bedrock blocks, latest mode with
operation-details events), tool arguments and results on the tool span's events, results as
content blocks, and `gen_ai.tool.status`."""

from __future__ import annotations

import json
from typing import Any

from otel_scorers import ScoringSpanProcessor
from otel_scorers.conventions.formats.converse import unwrap_blocks
from otel_scorers.conventions.formats.swarm_context import swarm_request
from otel_scorers.span_record import SpanRecord
from tests.conftest import RunRecorder, Telemetry
from tests.spans import event, only_run, span

DETAILS = "gen_ai.client.inference.operation.details"


def blocks(*items: dict[str, Any]) -> str:
    return json.dumps(list(items))


def strands_span(name: str, parent: SpanRecord | None = None, **attributes: Any) -> SpanRecord:
    operation = name.split(" ")[0]
    return span(
        name,
        parent,
        scope="strands.telemetry.tracer",
        gen_ai__operation__name=operation,
        gen_ai__system="strands-agents",
        **attributes,
    )


USE = {"toolUse": {"toolUseId": "c1", "name": "get_weather", "input": {"city": "Paris"}}}
RESULT = {"toolResult": {"toolUseId": "c1", "status": "success", "content": [{"text": "Sunny, 21°C"}]}}


def test_default_mode_reads_bedrock_blocks_from_span_events() -> None:
    root = strands_span(
        "invoke_agent weather_agent",
        gen_ai__agent__name="weather_agent",
        events=(
            event("gen_ai.user.message", content=blocks({"text": "Weather in Paris?"})),
            event("gen_ai.choice", message="It is sunny.\n", finish_reason="end_turn"),
        ),
    )
    cycle = strands_span("execute_event_loop_cycle", root)
    ask = strands_span(
        "chat",
        cycle,
        events=(
            event("gen_ai.user.message", content=blocks({"text": "Weather in Paris?"})),
            event("gen_ai.choice", message=blocks(USE), finish_reason="tool_use"),
        ),
    )
    tool = strands_span(
        "execute_tool get_weather",
        cycle,
        gen_ai__tool__name="get_weather",
        gen_ai__tool__call__id="c1",
        gen_ai__tool__status="success",
        events=(
            event("gen_ai.tool.message", role="tool", content='{"city": "Paris"}', id="c1"),
            event("gen_ai.choice", message=blocks({"text": "Sunny, 21°C"}), id="c1"),
        ),
    )
    answer = strands_span(
        "chat",
        cycle,
        events=(
            event("gen_ai.user.message", content=blocks({"text": "Weather in Paris?"})),
            event("gen_ai.assistant.message", content=blocks(USE)),
            event("gen_ai.tool.message", content=blocks(RESULT)),
            event("gen_ai.choice", message=blocks({"text": "It is sunny."}), finish_reason="end_turn"),
        ),
    )
    run = only_run([root, cycle, ask, tool, answer])
    assert (run.convention, run.input, run.output) == ("strands", "Weather in Paris?", "It is sunny.\n")
    (call,) = run.tool_calls
    assert (call.name, call.arguments, call.result, call.state) == (
        "get_weather",
        {"city": "Paris"},
        "Sunny, 21°C",
        "ok",
    )


def test_latest_mode_reads_operation_details_events_and_tool_attributes() -> None:
    def details(**attributes: Any) -> Any:
        return event(DETAILS, **attributes)

    user = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}])
    said = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "It is sunny.\n"}]}])
    root = strands_span(
        "invoke_agent weather_agent",
        gen_ai__agent__name="weather_agent",
        events=(details(gen_ai__input__messages=user), details(gen_ai__output__messages=said)),
    )
    tool = strands_span(
        "execute_tool get_weather",
        root,
        gen_ai__tool__name="get_weather",
        gen_ai__tool__call__arguments='{"city": "Paris"}',
        gen_ai__tool__call__result=blocks({"text": "Sunny, 21°C"}),
    )
    run = only_run([root, tool])
    assert (run.input, run.output) == ("Weather in Paris?", "It is sunny.\n")
    assert [(call.arguments, call.result) for call in run.tool_calls] == [({"city": "Paris"}, "Sunny, 21°C")]


def test_redacted_content_is_missing_and_tool_content_none() -> None:
    root = strands_span(
        "invoke_agent a",
        events=(
            event(DETAILS, gen_ai__input__messages="[REDACTED]"),
            event(DETAILS, gen_ai__output__messages="[REDACTED]"),
        ),
    )
    tool = strands_span(
        "execute_tool get_weather",
        root,
        gen_ai__tool__name="get_weather",
        events=(
            event("gen_ai.tool.message", content="[REDACTED]"),
            event("gen_ai.choice", message="[REDACTED]"),
        ),
    )
    run = only_run([root, tool])
    assert {"input", "output"} <= run.missing
    assert [(call.arguments, call.result) for call in run.tool_calls] == [(None, None)]


def test_tool_status_error_marks_the_call_failed() -> None:
    root = strands_span("invoke_agent a")
    tool = strands_span(
        "execute_tool get_weather",
        root,
        gen_ai__tool__name="get_weather",
        gen_ai__tool__status="error",
        events=(event("gen_ai.choice", message=blocks({"text": "Error: station offline"})),),
    )
    (call,) = only_run([root, tool]).tool_calls
    assert (call.state, call.result, call.error) == ("error", None, "Error: station offline")


def test_content_blocks_unwrap_to_what_the_tool_returned() -> None:
    assert unwrap_blocks([{"text": "a"}, {"text": "b"}]) == "ab"
    assert unwrap_blocks([{"json": {"temp": 21}}]) == {"temp": 21}
    mixed = [{"text": "a"}, {"image": {"format": "png"}}]
    assert unwrap_blocks(mixed) == mixed
    assert unwrap_blocks({"temp": 21}) == {"temp": 21}
    assert unwrap_blocks([]) == []


def test_a_swarm_handoff_is_not_a_tool_call() -> None:
    root = strands_span("invoke_agent triage", gen_ai__agent__name="triage")
    use = {"toolUse": {"toolUseId": "c1", "name": "handoff_to_agent", "input": {"agent_name": "specialist"}}}
    ask = strands_span(
        "chat",
        root,
        events=(
            event("gen_ai.user.message", content=blocks({"text": "Weather in Paris?"})),
            event("gen_ai.choice", message=blocks(use), finish_reason="tool_use"),
        ),
    )
    handoff = strands_span(
        "execute_tool handoff_to_agent",
        root,
        gen_ai__tool__name="handoff_to_agent",
        gen_ai__tool__call__id="c1",
        events=(event("gen_ai.choice", message=blocks({"text": "Handing off to specialist"}), id="c1"),),
    )
    run = only_run([root, ask, handoff])
    assert run.tool_calls == ()


def test_a_swarm_agents_input_is_the_users_request_inside_the_swarm_context() -> None:
    context = (
        "Context:\nHandoff Message: Weather in Paris?\n\nUser Request: What is the weather in Paris?\n"
        "Answer briefly.\n\nPrevious agents who worked on this: triage\n\n"
        "Other agents available for collaboration:\nAgent name: triage.\n\n"
        "You have access to swarm coordination tools if you need help from other agents."
    )
    root = strands_span(
        "invoke_agent specialist",
        gen_ai__agent__name="specialist",
        events=(event("gen_ai.user.message", content=blocks({"text": context})),),
    )
    assert only_run([root]).input == "What is the weather in Paris?\nAnswer briefly."
    assert swarm_request("Context:\nUser Request: Hi") == "Hi"
    assert swarm_request("Context: a user who starts like this") is None
    assert swarm_request("What is the weather?") is None


def test_in_process_a_default_mode_run_is_scored_from_its_span_events(telemetry: Telemetry) -> None:
    """The real SDK and processor, spans and events shaped as Strands' default mode makes them."""
    recorder = RunRecorder()
    seen = recorder.runs

    processor = ScoringSpanProcessor([recorder], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    tracer = telemetry.tracer_provider.get_tracer("strands.telemetry.tracer")
    common = {"gen_ai.system": "strands-agents"}
    question = blocks({"text": "Weather in Paris?"})
    with tracer.start_as_current_span(
        "invoke_agent weather_agent",
        attributes={**common, "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather_agent"},
    ) as run_span:
        run_span.add_event("gen_ai.user.message", {"content": question})
        with tracer.start_as_current_span(
            "chat", attributes={**common, "gen_ai.operation.name": "chat"}
        ) as chat:
            chat.add_event("gen_ai.user.message", {"content": question})
            chat.add_event("gen_ai.choice", {"message": blocks(USE), "finish_reason": "tool_use"})
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={**common, "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather"},
        ) as tool:
            tool.add_event(
                "gen_ai.tool.message", {"role": "tool", "content": '{"city": "Paris"}', "id": "c1"}
            )
            tool.add_event("gen_ai.choice", {"message": blocks({"text": "Sunny, 21°C"}), "id": "c1"})
        run_span.add_event("gen_ai.choice", {"message": "It is sunny.\n", "finish_reason": "end_turn"})
    assert processor.force_flush(5000)
    (run,) = seen
    assert (run.convention, run.agent_name, run.input, run.output) == (
        "strands",
        "weather_agent",
        "Weather in Paris?",
        "It is sunny.\n",
    )
    assert [(call.name, call.arguments, call.result) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C")
    ]
    processor.shutdown()
