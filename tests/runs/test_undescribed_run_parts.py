"""A run's parts kept where no key a reader knows holds them, read with the shipped descriptions
withheld: each corpus stands for a tracer whose vocabulary the project never saw, its runs found,
their text, names and tool calls read from what the trace itself shows."""

from __future__ import annotations

import pytest

from tests.runs.test_inferred_vocabulary_fixtures import (
    assert_read_as_written,
    no_shipped_descriptions,
    rebuilt,
)

__all__ = ["no_shipped_descriptions"]  # the fixture, used by every test here


@pytest.mark.parametrize(
    "scenario", ["tool_then_answer", "two_tools", "parallel_tools", "dict_result", "sub_agent", "two_runs"]
)
def test_a_result_sent_back_as_content_items_of_text_is_their_text(scenario: str) -> None:
    # mcp-agent's tool spans lie outside its runs; the model was sent each result as MCP's content
    # items (`[{"type": "text", "text": ...}]`): what the tool returned is their text, a Python
    # repr of data read as that data.
    runs = rebuilt("mcp-agent", scenario)
    assert runs and all(run.convention == "genai" for run in runs)
    assert_read_as_written("mcp-agent", scenario, runs)


@pytest.mark.parametrize(
    "scenario", ["tool_then_answer", "two_tools", "multi_turn", "failing_tool", "stream"]
)
def test_a_span_named_by_a_label_and_a_quoted_name_names_its_agent_and_its_tool_so(scenario: str) -> None:
    # Mastra through Laminar's exporter names its spans `agent run: 'weather-agent'` and
    # `tool: 'get_weather'`, and keeps no name key: the label says the kind, the quotes the name.
    runs = rebuilt("mastra-laminar", scenario)
    assert runs and all(run.convention.startswith("inferred:") for run in runs)
    assert_read_as_written("mastra-laminar", scenario, runs)


@pytest.mark.parametrize(
    "scenario",
    ["tool_then_answer", "two_tools", "no_tool", "responses_api", "two_runs", "report", "handoff_after_tool"],
)
def test_a_run_named_after_a_qualified_function_is_named_by_the_agent_of_its_first_turn(
    scenario: str,
) -> None:
    # Monocle's turn span is named after the function it traced (`agents.run.Runner.run_sync`)
    # and names no agent; the invocations inside it, joined into it as its steps, name theirs
    # (`entity.1.name`): the first names the run; a turn of another agent took it over.
    runs = rebuilt("monocle-openai-agents", scenario)
    assert runs and all(run.convention.startswith("inferred:") for run in runs)
    assert_read_as_written("monocle-openai-agents", scenario, runs)


@pytest.mark.parametrize(
    "scenario",
    ["tool_then_answer", "two_tools", "multi_turn", "failing_tool", "no_tool", "nested", "dict_result"],
)
def test_the_response_text_and_the_tools_input_of_the_genai_namespace_are_read(scenario: str) -> None:
    # Sentry's spans name their operations as the GenAI conventions do, and keep a model call's
    # answer as a JSON list of texts in `gen_ai.response.text`, a tool's arguments in
    # `gen_ai.tool.input`: the namespace's response text, its tool's input.
    runs = rebuilt("sentry-langchainjs", scenario)
    assert runs and all(run.convention == "genai" for run in runs)
    assert_read_as_written("sentry-langchainjs", scenario, runs)


@pytest.mark.parametrize(
    "scenario", ["tool_then_answer", "two_tools", "multi_turn", "failing_tool", "no_tool", "dict_result"]
)
def test_an_entity_named_by_its_kind_is_named_and_read_by_the_keys_the_readers_share(scenario: str) -> None:
    # AgentOps' Agno spans, read as a fork of OpenLLMetry's vocabulary (`agentops.span.kind`),
    # name each entity by its kind (`agentops.entity.name = agent`, `tool`): the agent is
    # `agent.name`, its answer `agent.output`; the tool `tool.name`, its arguments
    # `tool.parameters`, its result `tool.result`, its failure `tool.error`.
    runs = rebuilt("agentops-agno", scenario)
    assert runs
    assert_read_as_written("agentops-agno", scenario, runs)


@pytest.mark.parametrize(
    ("corpus", "scenario"), [("haystack-builtin", "failing_tool"), ("mlflow-haystack", "failing_tool")]
)
def test_a_tool_key_saying_the_call_failed_fails_it_whatever_its_result_holds(
    corpus: str, scenario: str
) -> None:
    # Haystack's tool span records the error object it sent the model as the result
    # (`{"error": ...}`) and says the call failed in `haystack.tool.error = true`: a key of the
    # tool's, in its namespace, named for its failure.
    runs = rebuilt(corpus, scenario)
    assert runs
    assert_read_as_written(corpus, scenario, runs)


@pytest.mark.parametrize("scenario", ["no_tool", "multi_turn"])
def test_a_run_joined_from_model_calls_is_named_by_the_unit_of_work_that_recorded_its_request(
    scenario: str,
) -> None:
    # Laminar's `observe()` root names the application's unit of work (`weather_agent`) and
    # records the request in `lmnr.span.input`; a turn that calls no tool holds no kind key, and
    # its run is joined from its model call alone.
    runs = rebuilt("lmnr-openaijs", scenario)
    assert runs
    assert_read_as_written("lmnr-openaijs", scenario, runs)


@pytest.mark.parametrize("corpus", ["haystack-builtin", "mlflow-haystack"])
def test_a_tool_returning_the_whole_state_of_the_agent_it_ran_returned_its_answer(corpus: str) -> None:
    # Haystack's `ComponentTool` around an agent records the agent's whole state as the tool's
    # result (`{"messages": [...]}`); the model is sent its last assistant message, read here
    # without the model calls' messages (a Python repr of Haystack's objects).
    runs = rebuilt(corpus, "nested")
    assert runs
    assert_read_as_written(corpus, "nested", runs)
