"""A tracer's own vocabulary read with its shipped description withheld, where no key says a span's
kind and its name does (`haystack.agent.run`, `haystack.agent.step.llm`,
`haystack.agent.step.tool`), each span's input and output kept in keys under its name: Haystack's
own tracing, read by the fixture tests' own comparison."""

from __future__ import annotations

import json

import pytest

from tests.runs.test_inferred_vocabulary_fixtures import (
    TRACES,
    assert_read_as_written,
    no_shipped_descriptions,
    rebuilt,
)

__all__ = ["no_shipped_descriptions"]  # the fixture, used by every test here


@pytest.mark.parametrize("scenario", ["in_pipeline", "two_agents_in_pipeline"])
def test_runs_named_by_their_spans_names_take_the_name_the_component_around_them_gives(scenario: str) -> None:
    # The pipeline's component span around each run is a typed entity naming an agent
    # (`haystack.component.type = Agent`): its `haystack.component.name` names the run.
    runs = rebuilt("haystack-builtin", scenario)
    assert {run.convention for run in runs} == {"inferred:haystack.agent.run"}
    assert_read_as_written("haystack-builtin", scenario, runs)


@pytest.mark.parametrize("scenario", ["tool_then_answer", "two_tools", "no_tool", "two_runs"])
def test_runs_named_by_their_spans_names_read_their_text_and_tool_calls(scenario: str) -> None:
    # The request, answer and tool calls are read from the keys under the spans' names.
    truth = json.loads((TRACES / "haystack-builtin" / f"{scenario}.truth.json").read_text())["runs"]
    runs = rebuilt("haystack-builtin", scenario)
    assert len(runs) == len(truth)
    for run, expected in zip(runs, truth, strict=True):
        assert run.input == expected["input"]
        assert run.output == expected["output"]
        calls = [(call.name, call.arguments, call.result) for call in run.tool_calls]
        assert calls == [(call["name"], call["arguments"], call["result"]) for call in expected["tool_calls"]]


@pytest.mark.parametrize(
    ("corpus", "scenario"),
    [
        ("haystack-builtin", "tool_then_answer"),
        ("haystack-builtin", "two_runs"),
        ("haystack-builtin", "dict_result"),
        ("mlflow-haystack", "two_tools"),
        ("mlflow-haystack", "search_then_summarize"),
    ],
)
def test_a_lone_agent_is_named_by_the_class_its_span_s_name_says_ran(corpus: str, scenario: str) -> None:
    # Nothing names a lone agent: `haystack.agent.run` says an agent ran, an `Agent`; a component
    # or a tool around it names it as in the tests above.
    runs = rebuilt(corpus, scenario)
    assert {run.agent_name for run in runs} == {"Agent"}
    assert_read_as_written(corpus, scenario, runs)
