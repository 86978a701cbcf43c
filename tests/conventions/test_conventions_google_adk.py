"""Google ADK: schema v2 (GenAI attributes, wrapped results, call ids that do not match the
model's) and the legacy schema (content on `call_llm`, `gcp.vertex.agent.*` tool attributes)."""

from __future__ import annotations

import json
from typing import Any

from otel_scorers import ScoringSpanProcessor
from otel_scorers.conventions.google_adk import GoogleADKConvention, unwrap_result
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanRecord
from tests.conftest import RunRecorder, Telemetry
from tests.spans import only_run, span

SCOPE = "gcp.vertex.agent"


def adk(name: str, parent: SpanRecord | None = None, **attributes: Any) -> SpanRecord:
    return span(name, parent, scope=SCOPE, **attributes)


def run_spans() -> tuple[SpanRecord, SpanRecord]:
    workflow = adk("invoke_workflow weather_agent", gen_ai__operation__name="invoke_workflow")
    agent = adk(
        "invoke_agent weather_agent",
        workflow,
        gen_ai__operation__name="invoke_agent",
        gen_ai__agent__name="weather_agent",
    )
    return workflow, agent


def tool(parent: SpanRecord, **attributes: Any) -> SpanRecord:
    return adk(
        "execute_tool get_weather",
        parent,
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name="get_weather",
        **attributes,
    )


def test_v2_results_are_unwrapped_and_calls_matched_by_order_and_name() -> None:
    workflow, agent = run_spans()
    ask = adk(
        "generate_content m",
        agent,
        gen_ai__operation__name="generate_content",
        gen_ai__input__messages=json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "Weather?"}]}]
        ),
        gen_ai__output__messages=json.dumps(
            [
                {
                    "role": "assistant",
                    "parts": [
                        {
                            "type": "tool_call",
                            "id": "get_weather_0",
                            "name": "get_weather",
                            "arguments": {"city": "Paris"},
                        }
                    ],
                }
            ]
        ),
    )
    weather = tool(
        agent,
        gen_ai__tool__call__id="adk-4f1c",
        gen_ai__tool__call__arguments='{"city": "Paris"}',
        gen_ai__tool__call__result='{"result": "Sunny, 21°C"}',
    )
    run = only_run([workflow, agent, ask, weather])
    assert (run.convention, run.agent_name, run.input) == ("google_adk", "weather_agent", "Weather?")
    (call,) = run.tool_calls
    assert (call.result, call.state) == ("Sunny, 21°C", "ok")
    assert len(run.tool_calls) == 1, "the model's call and the tool span are one call despite their ids"


def test_a_failed_calls_placeholder_id_gives_way_to_the_models() -> None:
    workflow, agent = run_spans()
    ask = adk(
        "generate_content m",
        agent,
        gen_ai__operation__name="generate_content",
        gen_ai__output__messages=json.dumps(
            [
                {
                    "role": "assistant",
                    "parts": [{"type": "tool_call", "id": "get_weather_0", "name": "get_weather"}],
                }
            ]
        ),
    )
    failed = tool(agent, status="error", error__type="RuntimeError", gen_ai__tool__call__id="<not specified>")
    (call,) = only_run([workflow, agent, ask, failed]).tool_calls
    assert (call.call_id, call.state) == ("get_weather_0", "error")


def legacy_call_llm(parent: SpanRecord, request: Any, response: Any) -> list[SpanRecord]:
    outer = adk(
        "call_llm",
        parent,
        gen_ai__system="gcp.vertex.agent",
        gen_ai__request__model="m",
        gen_ai__usage__input_tokens=20,
        gen_ai__usage__output_tokens=10,
        gcp__vertex__agent__llm_request=json.dumps(request),
        gcp__vertex__agent__llm_response=json.dumps(response),
    )
    inner = adk(
        "generate_content m",
        outer,
        gen_ai__system="gemini",
        gen_ai__operation__name="generate_content",
        gen_ai__usage__input_tokens=20,
        gen_ai__usage__output_tokens=10,
    )
    return [outer, inner]


def test_legacy_content_is_read_from_call_llm_and_tool_attributes() -> None:
    invocation = adk("invocation")
    agent = adk(
        "invoke_agent weather_agent",
        invocation,
        gen_ai__operation__name="invoke_agent",
        gen_ai__agent__name="w",
    )
    question = {"role": "user", "parts": [{"text": "Weather in Paris?"}]}
    function_call = {
        "role": "model",
        "parts": [{"function_call": {"name": "get_weather", "args": {"city": "Paris"}}}],
    }
    reply = {
        "role": "user",
        "parts": [{"function_response": {"name": "get_weather", "response": {"result": "Sunny"}}}],
    }
    first = legacy_call_llm(agent, {"contents": [question]}, {"content": function_call})
    weather = tool(
        agent,
        gcp__vertex__agent__tool_call_args='{"city": "Paris"}',
        gcp__vertex__agent__tool_response='{"result": "Sunny"}',
    )
    second = legacy_call_llm(
        agent,
        {"contents": [question, function_call, reply]},
        {"content": {"role": "model", "parts": [{"text": "It is sunny."}]}},
    )
    run = only_run([invocation, agent, *first, weather, *second])
    assert (run.input, run.output) == ("Weather in Paris?", "It is sunny.")
    assert [(call.name, call.arguments, call.result) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny")
    ]
    assert (run.usage.input_tokens, run.usage.output_tokens) == (40, 20), "call_llm and its child count once"


def test_legacy_capture_off_writes_empty_objects_which_are_not_content() -> None:
    agent = adk("invoke_agent w", gen_ai__operation__name="invoke_agent", gen_ai__agent__name="w")
    spans = [
        agent,
        *legacy_call_llm(agent, {}, {}),
        tool(agent, gcp__vertex__agent__tool_call_args="{}", gcp__vertex__agent__tool_response="{}"),
    ]
    run = only_run(spans)
    assert {"input", "output"} <= run.missing
    assert [(call.arguments, call.result) for call in run.tool_calls] == [(None, None)]


def test_a_tool_without_arguments_keeps_its_empty_arguments() -> None:
    agent = adk("invoke_agent w", gen_ai__operation__name="invoke_agent", gen_ai__agent__name="w")
    now = tool(
        agent,
        gcp__vertex__agent__tool_call_args="{}",
        gcp__vertex__agent__tool_response='{"result": "14:05"}',
    )
    (call,) = only_run([agent, now]).tool_calls
    assert (call.arguments, call.result) == ({}, "14:05")


def test_result_unwrapping() -> None:
    assert unwrap_result({"result": "Sunny"}) == "Sunny"
    assert unwrap_result({"result": None}) is None
    assert unwrap_result({"result": "<not specified>"}) is None
    assert unwrap_result({"temp": 21, "result": "ok"}) == {"temp": 21, "result": "ok"}, (
        "a dict the tool returned"
    )
    assert unwrap_result("Sunny") == "Sunny"


def test_a_transfer_to_another_agent_is_a_handoff_and_the_request_stays_the_users() -> None:
    """Layout of ADK 2.13 with `sub_agents`: the specialist's run sits beside the orchestrator's,
    and its model sees the orchestrator's turns as "For context:" user messages."""
    workflow, orchestrator = run_spans()
    question = {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}
    transfer = {
        "type": "tool_call",
        "id": "t0",
        "name": "transfer_to_agent",
        "arguments": {"agent_name": "spec"},
    }
    ask = adk(
        "generate_content m",
        orchestrator,
        gen_ai__operation__name="generate_content",
        gen_ai__input__messages=json.dumps([question]),
        gen_ai__output__messages=json.dumps([{"role": "assistant", "parts": [transfer]}]),
    )
    handoff = adk(
        "execute_tool transfer_to_agent",
        orchestrator,
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name="transfer_to_agent",
        gen_ai__tool__type="TransferToAgentTool",
        gen_ai__tool__call__result='{"result": null}',
    )
    specialist = adk(
        "invoke_agent spec", workflow, gen_ai__operation__name="invoke_agent", gen_ai__agent__name="spec"
    )
    context = {
        "role": "user",
        "parts": [{"type": "text", "content": "For context: [orchestrator] called ..."}],
    }
    answer = adk(
        "generate_content m",
        specialist,
        gen_ai__operation__name="generate_content",
        gen_ai__input__messages=json.dumps([question, context]),
        gen_ai__output__messages=json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}]
        ),
    )
    # The transfer's span does not say to whom (its arguments are not on it): ADK hands on to
    # the agent that runs next in the invocation.
    (run,) = build_runs([workflow, orchestrator, ask, handoff, specialist, answer])
    assert (run.agent_name, run.tool_calls, run.final_agent) == ("weather_agent", (), "spec")
    assert [(step.from_agent, step.to_agent) for step in run.handoffs] == [("weather_agent", "spec")]
    assert (run.input, run.output) == ("Weather in Paris?", "Sunny.")
    seen_by_spec = GoogleADKConvention().model_call(answer).input.items
    assert [message["role"] for message in seen_by_spec] == ["user", "other_agents"]


def test_in_process_a_legacy_run_is_scored_from_call_llm(telemetry: Telemetry) -> None:
    """The real SDK and processor, spans shaped as ADK's legacy schema makes them; the trace's
    root (`invocation`) starts before the run span and ends after it."""
    recorder = RunRecorder()
    seen = recorder.runs

    processor = ScoringSpanProcessor([recorder], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    tracer = telemetry.tracer_provider.get_tracer(SCOPE)
    request = {"contents": [{"role": "user", "parts": [{"text": "Say hello."}]}]}
    response = {"content": {"role": "model", "parts": [{"text": "Bonjour !"}]}}
    with (
        tracer.start_as_current_span("invocation"),
        tracer.start_as_current_span(
            "invoke_agent greeter",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "greeter"},
        ),
        tracer.start_as_current_span(
            "call_llm",
            attributes={"gcp.vertex.agent.llm_request": json.dumps(request), "gen_ai.usage.input_tokens": 20},
        ) as call_llm,
    ):
        with tracer.start_as_current_span(
            "generate_content m",
            attributes={"gen_ai.operation.name": "generate_content", "gen_ai.usage.input_tokens": 20},
        ):
            pass
        call_llm.set_attribute("gcp.vertex.agent.llm_response", json.dumps(response))
    assert processor.force_flush(5000)
    (run,) = seen
    assert (run.convention, run.agent_name, run.input, run.output, run.usage.input_tokens) == (
        "google_adk",
        "greeter",
        "Say hello.",
        "Bonjour !",
        20,
    )
    processor.shutdown()
