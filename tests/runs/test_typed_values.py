"""Values a tracer records tagged with their type (`{"type": "json", "value": ...}`), read with the
shipped descriptions withheld: the run's request and answer, its model calls' messages and its
tools' arguments and results are the values, by the fixture tests' own comparison."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_scorers.conventions.formats.genai_events import listed_messages
from otel_scorers.conventions.formats.typed_value import message_carried, typed_value
from otel_scorers.model import AgentRun
from otel_scorers.runs.otlp_files import InputProblem, runs_from_files
from otel_scorers.runs.run_text import reduced_text
from tests.conventions.test_fixture_runs import assert_runs_match
from tests.runs.test_inferred_vocabulary_fixtures import no_shipped_descriptions

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"

__all__ = ["no_shipped_descriptions"]  # the fixture, used by every test here


def rebuilt(corpus: str, scenario: str) -> list[AgentRun]:
    problems: list[InputProblem] = []
    runs = runs_from_files([TRACES / corpus / f"{scenario}.json"], problems)
    assert not problems, problems
    return sorted(runs, key=lambda run: run.start_ns)


@pytest.mark.parametrize(
    "scenario", ["tool_then_answer", "two_tools", "multi_turn", "nested", "agent_in_tool", "failing_tool"]
)
def test_values_recorded_with_their_type_are_read_as_the_values(scenario: str) -> None:
    # LangWatch's LangChain callback writes every input and output as `{"type": ..., "value": ...}`:
    # the graph's state, the model's chat messages, a tool's arguments as text, its result as the
    # chat message carrying it back.
    runs = rebuilt("langwatch-langchain", scenario)
    truth = json.loads((TRACES / "langwatch-langchain" / f"{scenario}.truth.json").read_text())
    assert runs and {run.convention for run in runs} == {"inferred:langwatch.span.type"}
    assert_runs_match(truth, "langwatch-langchain", runs)


def test_a_typed_value_holds_its_value_at_any_nesting() -> None:
    assert typed_value('{"type": "text", "value": "Sunny"}') == "Sunny"
    assert typed_value({"type": "json", "value": {"city": "Paris"}}) == {"city": "Paris"}
    assert typed_value({"type": "text", "value": '{"type": "json", "value": [1]}'}) == [1]
    # Not typed: a field beside them, a type that is no name, text that is not a typed value.
    assert typed_value({"type": "json", "value": 1, "id": "x"}) == {"type": "json", "value": 1, "id": "x"}
    assert typed_value({"type": ["a"], "value": 1}) == {"type": ["a"], "value": 1}
    assert typed_value('{"city": "Paris"}') == '{"city": "Paris"}'


def test_a_typed_request_and_answer_are_reduced_as_their_values_are() -> None:
    state = '{"type": "json", "value": {"messages": [{"role": "user", "content": "Hi"}]}}'
    assert reduced_text(state, "input") == "Hi"
    assert reduced_text('{"type": "text", "value": "Hello"}', "output") == "Hello"


def test_typed_chat_messages_are_the_messages() -> None:
    typed = '{"type": "chat_messages", "value": [{"role": "user", "content": "Hi"}]}'
    assert [message["role"] for message in listed_messages(typed, "user").items] == ["user"]
    batch = {
        "type": "list",
        "value": [{"type": "chat_messages", "value": [{"role": "assistant", "content": "A"}]}],
    }
    assert [message["role"] for message in listed_messages(batch, "assistant").items] == ["assistant"]


def test_a_result_carried_back_as_one_message_is_its_content() -> None:
    assert message_carried([{"role": "unknown", "content": "Sunny, 21°C"}]) == "Sunny, 21°C"
    assert message_carried([{"role": "tool", "content": '{"temp": 21}'}]) == {"temp": 21}
    two = [{"role": "tool", "content": "a"}, {"role": "tool", "content": "b"}]
    assert message_carried(two) == two
    assert message_carried([{"content": "a"}]) == [{"content": "a"}]
