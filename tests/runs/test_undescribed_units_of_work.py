"""Spans of an application's own units of work read with the shipped descriptions withheld: a
vocabulary that marks no agent, whose spans the GenAI reader claims by `gen_ai.operation.name`
(LangSmith's run types), read from what the spans themselves hold."""

from __future__ import annotations

import pytest

from otel_scorers.runs.run_text import reduced_text
from tests.runs.test_inferred_vocabulary_fixtures import (
    assert_read_as_written,
    no_shipped_descriptions,
    rebuilt,
)

__all__ = ["no_shipped_descriptions"]  # the fixture, used by every test here


@pytest.mark.parametrize(
    "scenario",
    ["tool_then_answer", "two_tools", "multi_turn", "two_runs", "nested", "failing_tool", "no_tool"],
)
def test_a_root_span_of_an_operation_no_convention_lists_is_the_run_of_the_model_calls_under_it(
    scenario: str,
) -> None:
    # LangSmith JS's `traceable` agent is a root span of operation `chain`, no agent named: it is
    # the run of the model calls under it, named as its span is; what it returned, recorded as
    # `{"outputs": value}`, is its answer, and a tool's result so recorded the value.
    runs = rebuilt("langsmith-openaijs", scenario)
    assert runs and {run.convention for run in runs} == {"genai"}
    assert_read_as_written("langsmith-openaijs", scenario, runs)


def test_a_graph_a_tool_runs_is_named_as_its_span_is() -> None:
    # LangSmith's span of a LangGraph graph a tool runs (`LangGraph`, operation `chain`).
    runs = rebuilt("langsmith-langchain", "agent_in_tool")
    assert [run.agent_name for run in runs] == ["travel_agent", "LangGraph"]
    assert_read_as_written("langsmith-langchain", "agent_in_tool", runs)


def test_what_langchains_callbacks_recorded_of_a_text_is_that_text() -> None:
    assert reduced_text('{"outputs": "It is 14:05 in Paris."}', "output") == "It is 14:05 in Paris."
    assert reduced_text('{"inputs": "Hi", "tags": [], "metadata": {}}', "input") == "Hi"
