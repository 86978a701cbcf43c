"""What Laminar's SDK (`descriptions/laminar.yaml`) holds, read on traces captured from OpenAI Agents
SDK agents under lmnr 0.8 (tests/fixtures/traces/lmnr-openai-agents)."""

from __future__ import annotations

from otel_scorers import conventions
from otel_scorers.conventions.formats.messages import genai_messages, text_of
from otel_scorers.model import AgentRun

from .fixture_runs import attribute_values, runs_of


def calls(run: AgentRun) -> list[tuple[object, ...]]:
    return [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls]


def test_the_default_span_declaring_an_agent_is_its_run_and_the_task_and_turns_around_it_are_not() -> None:
    # `when.holds`: the agent's span is a `DEFAULT` span like the task's and each turn's; only its
    # input declares an agent (`output_type`).
    assert set(attribute_values("lmnr-openai-agents", "two_tools", "agents.turn", "lmnr.span.type")) == {
        "DEFAULT"
    }
    (run,) = runs_of("lmnr-openai-agents", "two_tools")
    assert run.convention == "laminar"
    assert run.agent_name == "weather_agent"
    assert calls(run) == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok"),
        ("get_time", {"city": "Paris"}, "14:05", "ok"),
    ]


def test_an_agent_s_declaration_on_its_span_is_no_request_the_model_calls_hold_it() -> None:
    assert attribute_values("lmnr-openai-agents", "tool_then_answer", "weather_agent", "lmnr.span.input") == [
        '{"name":"weather_agent","tools":["get_weather"],"output_type":"str"}'
    ]
    (run,) = runs_of("lmnr-openai-agents", "tool_then_answer")
    assert run.input == "What is the weather in Paris?"
    assert run.output == "It is sunny and 21°C in Paris."


def test_a_laminar_handoff_span_joins_the_agents_into_one_run() -> None:
    (run,) = runs_of("lmnr-openai-agents", "handoff_after_tool")
    assert (run.agent_name, run.final_agent) == ("triage_agent", "weather_agent")
    assert [call.name for call in run.tool_calls] == ["get_time", "get_weather"]
    assert [(handoff.from_agent, handoff.to_agent) for handoff in run.handoffs] == [
        ("triage_agent", "weather_agent")
    ]


def test_a_responses_api_answer_in_output_text_blocks_is_the_run_s_answer() -> None:
    (run,) = runs_of("lmnr-openai-agents", "responses_api")
    assert run.output == "It is sunny and 21°C in Paris."


def test_responses_api_call_items_among_messages_are_the_model_s_tool_calls_and_their_results() -> None:
    # The GenAI messages of Laminar's Responses API model span hold the API's items as they are.
    first, second = attribute_values(
        "lmnr-openai-agents", "responses_api", "agents.response", "gen_ai.input.messages"
    )
    asked = genai_messages(
        attribute_values("lmnr-openai-agents", "responses_api", "agents.response", "gen_ai.output.messages")[
            0
        ]
    )
    assert [part["type"] for part in asked.items[0]["parts"]] == ["tool_call"]
    sent = genai_messages(second).items
    assert [(message["role"], message["parts"][0]["type"]) for message in sent[-2:]] == [
        ("assistant", "tool_call"),
        ("tool", "tool_call_response"),
    ]
    assert text_of(genai_messages(first).items[0]) == "You answer questions about the weather. Use the tools."


def test_without_laminar_s_description_its_model_calls_make_one_run_not_two() -> None:
    # Read by the GenAI reader alone, the second call continues the first with its tool's result.
    try:
        conventions.use_descriptions((), withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
        runs = runs_of("lmnr-openai-agents", "responses_api")
    finally:
        conventions.use_descriptions(())
    assert len(runs) == 1
    assert runs[0].output == "It is sunny and 21°C in Paris."
