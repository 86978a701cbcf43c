"""Tracers whose kind key sits beside the keys other readers read, read with the shipped
descriptions withheld: a kind key under the GenAI namespace that the GenAI conventions do not
define, the bare keys holding a span's input and output, a root the vocabulary reads as a tool
call, and kind values on the calls another reader took, by the fixture tests' own comparison."""

from __future__ import annotations

import pytest

from otel_scorers.conventions.formats.mcp import text_parts_value
from otel_scorers.conventions.inferred import VocabularyInference
from otel_scorers.conventions.inferred_handoffs import HANDOFF_NAME
from otel_scorers.span_record import SpanRecord
from tests.runs.test_inferred_vocabulary_fixtures import (
    assert_read_as_written,
    no_shipped_descriptions,
    rebuilt,
)

__all__ = ["no_shipped_descriptions"]  # the fixture, used by every test here


@pytest.mark.parametrize(
    "scenario",
    [
        "tool_then_answer",
        "agent_as_tool",
        "failing_tool",
        "no_tool",
        "responses_api",
        "two_runs",
        "report",
        "handoff_after_tool",
    ],
)
def test_a_kind_key_the_genai_conventions_do_not_define_is_the_tracer_s_own(scenario: str) -> None:
    # traceAI writes OpenInference's kinds in `gen_ai.span.kind` (AGENT, TOOL, LLM, CHAIN), the
    # spans' input and output in the bare `input.value` / `output.value`: the GenAI keys beside it
    # (`gen_ai.provider.name`) keep their own meaning and name no run.
    runs = rebuilt("traceai-openai-agents", scenario)
    assert runs and {run.convention for run in runs} == {"inferred:gen_ai.span.kind"}
    assert_read_as_written("traceai-openai-agents", scenario, runs)


def test_the_kind_keys_the_genai_conventions_define_are_never_inferred() -> None:
    inference = VocabularyInference(())
    assert inference.may_be_kind("gen_ai.span.kind")
    assert not inference.may_be_kind("gen_ai.tool.type")  # `function`: the GenAI tool's type
    assert not inference.may_be_kind("gen_ai.output.type")
    assert not inference.may_be_kind("gen_ai.operation.name")
    own = SpanRecord(1, 2, None, "triage_agent", attributes={"gen_ai.span.kind": "AGENT"})
    assert inference.kind_keys_in(own) == ["gen_ai.span.kind"]
    # A span saying its operation the GenAI way is the GenAI reader's: its kind is the operation.
    genai = SpanRecord(
        1, 3, None, "chat", attributes={"gen_ai.operation.name": "chat", "gen_ai.span.kind": "LLM"}
    )
    assert inference.kind_keys_in(genai) == []


@pytest.mark.parametrize("scenario", ["tool_then_answer", "nested", "multi_turn", "failing_tool", "no_tool"])
def test_a_root_an_inferred_vocabulary_reads_as_a_tool_call_is_the_unit_of_work(scenario: str) -> None:
    # Prompt flow's `span_type` is `Function` for an agent's function and a tool's alike, `LLM` for
    # the model call; the function's arguments are in the bare `inputs`, its return in `output`.
    runs = rebuilt("promptflow-openai", scenario)
    assert runs and {run.convention for run in runs} == {"inferred:span_type"}
    assert_read_as_written("promptflow-openai", scenario, runs)


@pytest.mark.parametrize("scenario", ["tool_then_answer", "two_tools", "nested", "multi_turn", "no_tool"])
def test_kind_values_on_the_model_calls_another_reader_took_name_those_calls_too(scenario: str) -> None:
    # LangWatch's TypeScript callback writes `langwatch.span.type` (chain, llm, tool); its model
    # calls carry `gen_ai.request.model`, and the GenAI reader takes them. The key names model
    # calls, so its chains are composed units, the run the graph at the top around them; without
    # a tool call (no_tool) it names chains and model calls only, and reads so too.
    runs = rebuilt("langwatch-langchainjs", scenario)
    assert runs
    assert_read_as_written("langwatch-langchainjs", scenario, runs)


@pytest.mark.parametrize(
    "scenario", ["tool_then_answer", "two_tools", "dict_result", "sub_agent", "parallel_tools"]
)
def test_a_tool_message_of_text_parts_gives_their_text_as_the_result(scenario: str) -> None:
    # mcp-agent's OpenAI calls carry each tool's `CallToolResult` content to the model as the tool
    # message's content parts (`[{"type": "text", "text": "Sunny, 21°C"}]`); the GenAI reader reads
    # the run, its tool calls from that conversation.
    runs = rebuilt("mcp-agent", scenario)
    assert runs and all(not isinstance(call.result, list) for run in runs for call in run.tool_calls)
    assert_read_as_written("mcp-agent", scenario, runs)


def test_text_parts_of_either_shape_are_their_text() -> None:
    assert text_parts_value([{"type": "text", "text": "Sunny"}]) == "Sunny"
    assert text_parts_value([{"type": "text", "content": '{"a": 1}'}]) == {"a": 1}
    assert text_parts_value([{"type": "image", "url": "x"}]) == [{"type": "image", "url": "x"}]


@pytest.mark.parametrize("scenario", ["tool_then_answer", "no_tool", "dict_result", "two_tools"])
def test_a_namespace_s_tool_input_and_response_text_are_read_as_the_generic_keys_are(scenario: str) -> None:
    # Sentry's JavaScript SDK writes GenAI operations, a tool's arguments in `gen_ai.tool.input`
    # and the agent's answer in `gen_ai.response.text`, keys the GenAI conventions do not define.
    runs = rebuilt("sentry-langchainjs", scenario)
    assert runs and all(run.output for run in runs)
    assert all(call.arguments is not None for run in runs for call in run.tool_calls)
    assert_read_as_written("sentry-langchainjs", scenario, runs)


def test_a_span_named_for_a_handoff_to_another_run_s_agent_is_a_handoff() -> None:
    # traceAI writes the SDK's handoff as a TOOL span named `handoff to {agent}`, and nothing else
    # of it: the agent handed to goes on in the run.
    runs = rebuilt("traceai-openai-agents", "handoff_after_tool")
    assert [(handoff.from_agent, handoff.to_agent) for run in runs for handoff in run.handoffs] == [
        ("triage_agent", "weather_agent")
    ]
    assert_read_as_written("traceai-openai-agents", "handoff_after_tool", runs)


def test_a_handoff_s_name_says_it_before_the_agent_handed_to() -> None:
    assert [
        HANDOFF_NAME.sub("", name, count=1) for name in ("handoff to a", "transfer_to_b", "Hand_off: c")
    ] == [
        "a",
        "b",
        "c",
    ]
    assert HANDOFF_NAME.match("handoffs") is None and HANDOFF_NAME.match("transferred b") is None
