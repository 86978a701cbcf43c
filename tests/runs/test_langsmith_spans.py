"""What LangSmith's OpenTelemetry export writes (`descriptions/langsmith.yaml`), read on traces
captured from LangChain agents traced by LangSmith 0.14 in OpenTelemetry-only mode
(tests/fixtures/traces/langsmith-langchain)."""

from __future__ import annotations

import json

from otel_scorers.conventions.base import RunSpanContent
from otel_scorers.conventions.described import described
from otel_scorers.conventions.formats.genai_events import listed_messages
from otel_scorers.runs.run_text import FROM_STRUCTURE, span_text
from otel_scorers.span_record import SpanRecord

from .fixture_runs import attribute_values, runs_of

CORPUS = "langsmith-langchain"


def test_a_langsmith_run_is_named_by_its_run_name_and_read_from_its_inputs_and_outputs() -> None:
    (run,) = runs_of(CORPUS, "tool_then_answer")
    assert run.convention == "langsmith"
    assert run.agent_name == "weather_agent"
    # The graph's input state and final state, as LangSmith recorded them (`gen_ai.prompt`,
    # `gen_ai.completion`), reduced to the user's request and the agent's answer.
    assert run.input == "What is the weather in Paris?"
    assert run.output == "It is sunny and 21°C in Paris."
    assert run.text_sources == {"input": FROM_STRUCTURE, "output": FROM_STRUCTURE}
    assert [
        (call.name, call.call_id, call.arguments, call.result, call.state) for call in run.tool_calls
    ] == [("get_weather", "call_001", {"city": "Paris"}, "Sunny, 21°C", "ok")]
    assert not run.missing


def test_a_langchain_chat_models_serialised_messages_are_its_calls_messages() -> None:
    (run,) = runs_of(CORPUS, "tool_then_answer")
    # The chat model was given a batch of one list of messages serialised with their class.
    prompt = json.loads(attribute_values(CORPUS, "tool_then_answer", "ScriptedChatModel", "gen_ai.prompt")[0])
    assert prompt["messages"][0][0]["id"][-1] == "SystemMessage"
    assert run.input_messages == (
        {
            "role": "system",
            "parts": [
                {"type": "text", "content": "You answer questions about the weather and the local time."}
            ],
        },
        {"role": "user", "parts": [{"type": "text", "content": "What is the weather in Paris?"}]},
    )
    assert run.output_messages == (
        {"role": "assistant", "parts": [{"type": "text", "content": "It is sunny and 21°C in Paris."}]},
    )
    assert run.usage.input_tokens == 40 + 65


def test_a_serialised_message_in_any_message_list_is_read_as_one() -> None:
    dumped = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", "AIMessage"],
        "kwargs": {"content": "", "type": "ai", "tool_calls": [{"name": "f", "args": {"x": 1}, "id": "c1"}]},
    }
    as_dict = {"type": "human", "data": {"content": "hi"}}
    messages = listed_messages([[as_dict, dumped]], "user")
    assert messages.items == (
        {"role": "user", "parts": [{"type": "text", "content": "hi"}]},
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "c1", "name": "f", "arguments": {"x": 1}}],
        },
    )


def test_a_run_whose_recorded_output_is_an_empty_object_has_no_answer() -> None:
    (run,) = runs_of(CORPUS, "failing_tool")
    # The graph raised: LangSmith recorded its outputs as `{}`, which says nothing.
    assert attribute_values(CORPUS, "failing_tool", "weather_agent", "gen_ai.completion") == ["{}"]
    assert run.output is None
    assert "output" in run.missing
    assert [(call.name, call.state) for call in run.tool_calls] == [("get_weather", "error")]
    # Whichever reader read it: an empty structure is as if the span held nothing.
    assert span_text(RunSpanContent(output_text="{}"), "output") is None
    assert span_text(RunSpanContent(input_text="[]"), "input") is None


def test_a_graph_a_tool_runs_is_its_own_run_named_by_langsmith() -> None:
    outer, inner = runs_of(CORPUS, "agent_in_tool")
    assert (outer.agent_name, inner.agent_name) == ("travel_agent", "LangGraph")
    assert inner.input == "What is the weather in Paris?"
    assert [call.result for call in outer.tool_calls] == ["It is sunny and 21°C in Paris."]


def test_a_description_without_a_runs_when_makes_no_span_a_run() -> None:
    (reader,) = described([{"name": "plain", "scope": "plain", "run": {"agent_name": "who"}}])
    span = SpanRecord(1, 2, None, "agent", scope="plain", attributes={"who": "x"})
    assert reader.detect(span)
    assert reader.role(span) is None
    assert reader.run_start_markers == () and reader.run_start_names == ()


JS_CORPUS = "langsmith-openaijs"


def test_a_traceable_at_the_top_of_a_trace_around_its_own_model_calls_is_the_run() -> None:
    # LangSmith JS's `traceable` agent is a `chain`, a run type that marks no agent: the trace's
    # root span, around model calls of its own, is the run.
    assert attribute_values(JS_CORPUS, "no_tool", "weather_agent", "langsmith.span.kind") == ["chain"]
    (run,) = runs_of(JS_CORPUS, "no_tool")
    assert run.convention == "langsmith"
    assert (run.agent_name, run.input) == ("weather_agent", "Say hello in French.")
    assert [run.agent_name for run in runs_of(JS_CORPUS, "two_runs")] == ["weather_agent", "weather_agent"]


def test_an_agent_a_top_level_traceable_runs_through_a_tool_is_a_run_of_its_own() -> None:
    planner, expert = runs_of(JS_CORPUS, "nested")
    assert (planner.agent_name, expert.agent_name) == ("trip_planner", "weather_agent")
    assert [call.name for call in planner.tool_calls] == ["ask_weather_expert"]
    assert [call.name for call in expert.tool_calls] == ["get_weather"]


def test_what_a_traceable_returned_that_is_no_object_is_unwrapped_from_its_outputs() -> None:
    recorded = attribute_values(JS_CORPUS, "tool_then_answer", "get_weather", "gen_ai.completion")
    assert json.loads(recorded[0]) == {"outputs": "Sunny, 21°C"}
    (run,) = runs_of(JS_CORPUS, "tool_then_answer")
    assert run.output == "It is sunny and 21°C in Paris."
    assert [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok")
    ]


def test_a_traceable_tool_that_threw_is_a_failed_call_by_its_exception_event() -> None:
    (run,) = runs_of(JS_CORPUS, "failing_tool")
    assert [(call.name, call.state) for call in run.tool_calls] == [("get_weather", "error")]
