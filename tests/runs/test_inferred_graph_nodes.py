"""A tracer's own vocabulary over a LangGraph graph, read with its shipped description withheld:
its model calls keep their messages in the GenAI conventions' keys though no GenAI reader claims
them, and `gen_ai.agent.name` names, on every span, the graph's node it ran in, not an agent."""

from __future__ import annotations

import json

import pytest

from otel_scorers.conventions.inferred_names import name_keys_name_steps
from otel_scorers.span_record import SpanRecord
from tests.runs.test_inferred_vocabulary_fixtures import (
    TRACES,
    assert_read_as_written,
    no_shipped_descriptions,
    rebuilt,
)

__all__ = ["no_shipped_descriptions"]  # the fixture, used by every test here

SCENARIOS = ["tool_then_answer", "two_tools", "multi_turn", "nested", "agent_in_tool", "failing_tool"]


def truth_runs(scenario: str) -> list[dict[str, object]]:
    runs: list[dict[str, object]] = json.loads(
        (TRACES / "fiddler-langgraph" / f"{scenario}.truth.json").read_text()
    )["runs"]
    return runs


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_model_call_s_messages_in_the_genai_keys_give_the_run_its_request_and_answer(scenario: str) -> None:
    # Fiddler's `fiddler.span.type = llm` spans keep their messages in `gen_ai.input.messages` /
    # `gen_ai.output.messages`; the graph's span records neither its input nor its output.
    runs = rebuilt("fiddler-langgraph", scenario)
    assert [(run.input, run.output) for run in runs] == [
        (run["input"], run["output"]) for run in truth_runs(scenario)
    ]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_name_key_naming_the_graph_s_nodes_does_not_name_the_run(scenario: str) -> None:
    # `gen_ai.agent.name = model` on the graph's span `weather_agent`, as on its node `model`.
    runs = rebuilt("fiddler-langgraph", scenario)
    assert {run.convention for run in runs} == {"inferred:fiddler.span.type"}
    assert_read_as_written("fiddler-langgraph", scenario, runs)


def span(span_id: int, name: str, agent: str | None, parent: int | None = None) -> SpanRecord:
    attributes = {"gen_ai.agent.name": agent} if agent else {}
    return SpanRecord(
        trace_id=1, span_id=span_id, parent_span_id=parent, name=name, scope="acme", attributes=attributes
    )


def test_name_keys_name_steps_only_where_a_span_names_a_step_inside_it() -> None:
    graph = [span(1, "weather_agent", "model"), span(2, "model", "model", 1), span(3, "chat", "model", 2)]
    assert name_keys_name_steps(graph)
    # An agent's name on its own span and on its calls: the agent's.
    assert not name_keys_name_steps(
        [span(1, "weather_agent", "weather_agent"), span(2, "chat", "weather_agent", 1)]
    )
    # A name no span names itself by: an agent's.
    assert not name_keys_name_steps(
        [span(1, "invoke_agent", "weather_agent"), span(2, "chat", "weather_agent", 1)]
    )
    # A step named beside the span, not inside it; a span naming no step.
    assert not name_keys_name_steps([span(1, "weather_agent", "model"), span(2, "model", "model")])
    assert not name_keys_name_steps([*graph, span(4, "run", "planner", 1)])
