"""Pydantic AI: v2 span names and tool attributes, this run's messages after the history, the
answer in `final_result`, the run's aggregated usage, and `ModelRetry`."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from otel_scorers import ScoringSpanProcessor
from otel_scorers.conventions import classify, may_start_run
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import from_readable_span
from tests.conftest import RunRecorder, Telemetry
from tests.spans import event, only_run, span

SCOPE = "pydantic-ai"


def user(content: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": content}]}


def assistant(content: str) -> dict[str, Any]:
    return {"role": "assistant", "parts": [{"type": "text", "content": content}]}


def asks(name: str, call_id: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}],
    }


def answers(name: str, call_id: str, result: Any) -> dict[str, Any]:
    return {
        "role": "user",
        "parts": [{"type": "tool_call_response", "id": call_id, "name": name, "result": result}],
    }


def test_v2_span_names_and_tool_attributes() -> None:
    root = span(
        "agent run",
        scope=SCOPE,
        agent_name="weather_agent",
        final_result="Sunny in Paris.",
        pydantic_ai__all_messages=json.dumps([user("Weather in Paris?"), assistant("Sunny in Paris.")]),
    )
    tool = span(
        "running tool",
        root,
        scope=SCOPE,
        gen_ai__tool__name="get_weather",
        gen_ai__tool__call__id="c1",
        tool_arguments='{"city": "Paris"}',
        tool_response="Sunny, 21°C",
    )
    run = only_run([root, tool])
    assert (run.convention, run.agent_name, run.input, run.output) == (
        "pydantic_ai",
        "weather_agent",
        "Weather in Paris?",
        "Sunny in Paris.",
    )
    (call,) = run.tool_calls
    assert (call.name, call.call_id, call.arguments, call.result) == (
        "get_weather",
        "c1",
        {"city": "Paris"},
        "Sunny, 21°C",
    )
    assert may_start_run("agent run", {}), "v2 run spans are recognised when they start"


def test_the_input_is_this_runs_request_not_the_history() -> None:
    history = [
        user("Weather in Paris?"),
        asks("get_weather", "c1", {"city": "Paris"}),
        answers("get_weather", "c1", "Sunny"),
    ]
    history.append(assistant("Sunny."))
    new = [
        user("And the time?"),
        asks("get_time", "c2", {"city": "Paris"}),
        answers("get_time", "c2", "14:05"),
    ]
    new.append(assistant("It is 14:05."))
    root = span(
        "invoke_agent weather_agent",
        scope=SCOPE,
        gen_ai__operation__name="invoke_agent",
        gen_ai__agent__name="weather_agent",
        pydantic_ai__all_messages=json.dumps(history + new),
        pydantic_ai__new_message_index=len(history),
        final_result="It is 14:05.",
    )
    run = only_run([root])
    assert (run.input, run.output) == ("And the time?", "It is 14:05.")
    assert run.input_messages[0]["parts"][0]["content"] == "And the time?", "history left out"


def test_a_structured_final_result_is_the_output_as_json() -> None:
    root = span(
        "invoke_agent a",
        scope=SCOPE,
        gen_ai__operation__name="invoke_agent",
        final_result='{"city": "Paris", "temp": 21}',
    )
    assert only_run([root]).output == '{"city": "Paris", "temp": 21}'


def test_usage_is_the_runs_aggregate() -> None:
    root = span(
        "invoke_agent a",
        scope=SCOPE,
        gen_ai__operation__name="invoke_agent",
        gen_ai__aggregated_usage__input_tokens=114,
        gen_ai__aggregated_usage__output_tokens=18,
    )
    chats = [
        span(
            "chat m",
            root,
            scope=SCOPE,
            gen_ai__operation__name="chat",
            gen_ai__usage__input_tokens=56,
            gen_ai__usage__output_tokens=5,
        ),
        span(
            "chat m",
            root,
            scope=SCOPE,
            gen_ai__operation__name="chat",
            gen_ai__usage__input_tokens=58,
            gen_ai__usage__output_tokens=13,
        ),
    ]
    run = only_run([root, *chats])
    assert (run.usage.input_tokens, run.usage.output_tokens) == (114, 18)


def test_a_model_retry_is_a_failed_call_and_the_retry_prompt_is_not_its_result() -> None:
    root = span("invoke_agent a", scope=SCOPE, gen_ai__operation__name="invoke_agent", final_result="Sorry.")
    retry = span(
        "execute_tool get_weather",
        root,
        scope=SCOPE,
        status="error",
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name="get_weather",
        gen_ai__tool__call__result="weather service unavailable",
        pydantic_ai__tool__retry__cause="model_retry",
        events=(
            event(
                "exception",
                exception__type="pydantic_ai.exceptions.ToolRetryError",
                exception__message="weather service unavailable",
            ),
        ),
    )
    (call,) = only_run([root, retry]).tool_calls
    assert (call.state, call.result) == ("error", None)
    assert call.error == "pydantic_ai.exceptions.ToolRetryError: weather service unavailable"


def test_v1_messages_as_event_bodies() -> None:
    bodies = [
        {"event.name": "gen_ai.user.message", "role": "user", "content": "Say hello."},
        {"event.name": "gen_ai.assistant.message", "role": "assistant", "content": "Hello!"},
    ]
    root = span("agent run", scope=SCOPE, agent_name="greeter", all_messages_events=json.dumps(bodies))
    run = only_run([root])
    assert (run.agent_name, run.input) == ("greeter", "Say hello.")


def test_pydantic_ai_is_detected_before_plain_genai() -> None:
    chat = span("chat m", scope=SCOPE, gen_ai__operation__name="chat")
    classified = classify(chat)
    assert classified is not None and classified[0].name == "pydantic_ai" and classified[1] == "model"


def test_spans_from_the_sdk() -> None:
    """The same reading on real SDK spans, as the in-process processor sees them."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer(SCOPE)
    with tracer.start_as_current_span("agent run", attributes={"agent_name": "weather_agent"}) as run_span:
        with tracer.start_as_current_span(
            "running tool",
            attributes={"gen_ai.tool.name": "get_weather", "tool_arguments": '{"city": "Paris"}'},
        ) as tool_span:
            tool_span.record_exception(RuntimeError("unavailable"))
            tool_span.set_status(Status(StatusCode.ERROR))
        run_span.set_attribute(
            "pydantic_ai.all_messages", json.dumps([user("Weather?"), assistant("No weather today.")])
        )
        run_span.set_attribute("final_result", "No weather today.")
    provider.shutdown()
    (run,) = build_runs(from_readable_span(finished) for finished in exporter.get_finished_spans())
    assert (run.agent_name, run.input, run.output) == ("weather_agent", "Weather?", "No weather today.")
    (call,) = run.tool_calls
    assert (call.name, call.arguments, call.state, call.error) == (
        "get_weather",
        {"city": "Paris"},
        "error",
        "RuntimeError: unavailable",
    )


def test_a_structured_answer_through_the_output_tool_is_not_a_tool_call() -> None:
    """`output_type=Weather`: the model answers by calling the output tool, which no tool span
    answers; it is the run's answer, not an unfinished call."""
    root = span(
        "invoke_agent weather_agent",
        scope=SCOPE,
        gen_ai__operation__name="invoke_agent",
        final_result='{"city":"Paris","temp":21}',
    )
    parameters = json.dumps(
        {"function_tools": [{"name": "get_weather"}], "output_tools": [{"name": "final_result"}]}
    )
    ask = span(
        "chat m",
        root,
        scope=SCOPE,
        gen_ai__operation__name="chat",
        model_request_parameters=parameters,
        gen_ai__input__messages=json.dumps([user("Weather in Paris?")]),
        gen_ai__output__messages=json.dumps([asks("get_weather", "c1", {"city": "Paris"})]),
    )
    tool = span(
        "execute_tool get_weather",
        root,
        scope=SCOPE,
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name="get_weather",
        gen_ai__tool__call__id="c1",
        gen_ai__tool__call__result="Sunny, 21",
    )
    answer = span(
        "chat m",
        root,
        scope=SCOPE,
        gen_ai__operation__name="chat",
        model_request_parameters=parameters,
        gen_ai__output__messages=json.dumps([asks("final_result", "c2", {"city": "Paris", "temp": 21})]),
    )
    run = only_run([root, ask, tool, answer])
    assert run.tool_names == ["get_weather"]
    assert [call.state for call in run.tool_calls] == ["ok"]
    assert run.output == '{"city":"Paris","temp":21}'
    assert json.loads(run.output_messages[0]["parts"][0]["content"]) == {"city": "Paris", "temp": 21}


def test_in_process_a_v2_agent_run_is_spotted_by_its_name_when_it_starts(telemetry: Telemetry) -> None:
    """The real SDK and processor; pydantic-ai sets the run's content only when the run ends."""
    recorder = RunRecorder()
    seen = recorder.runs

    processor = ScoringSpanProcessor([recorder], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    tracer = telemetry.tracer_provider.get_tracer(SCOPE)
    with tracer.start_as_current_span("agent run") as run_span:
        with tracer.start_as_current_span("running tool") as tool_span:
            tool_span.set_attributes(
                {
                    "gen_ai.tool.name": "get_weather",
                    "tool_arguments": '{"city": "Paris"}',
                    "tool_response": "Sunny",
                }
            )
        run_span.set_attributes(
            {
                "agent_name": "weather_agent",
                "pydantic_ai.all_messages": json.dumps([user("Weather in Paris?"), assistant("Sunny.")]),
                "final_result": "Sunny.",
            }
        )
    assert processor.force_flush(5000)
    (run,) = seen
    assert (run.convention, run.agent_name, run.input, run.output) == (
        "pydantic_ai",
        "weather_agent",
        "Weather in Paris?",
        "Sunny.",
    )
    assert [(call.name, call.arguments, call.result) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny")
    ]
    processor.shutdown()
