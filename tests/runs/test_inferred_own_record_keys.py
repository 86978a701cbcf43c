"""Traces of tracers writing keys of their own, read with the shipped descriptions withheld: what a
run's and a call's own keys say (its name, its failure, its conversation) is read from their shape,
by the fixture tests' own comparison."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_scorers.model import AgentRun
from otel_scorers.runs.conversation_id import conversation_id_of
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


def truth(corpus: str, scenario: str) -> dict[str, object]:
    found: dict[str, object] = json.loads((TRACES / corpus / f"{scenario}.truth.json").read_text())
    return found


def test_a_metadata_entry_named_for_a_thread_is_the_run_s_conversation() -> None:
    # LangSmith keeps the metadata it is given one key per entry: `langsmith.metadata.thread_id`.
    runs = rebuilt("langsmith-openai", "multi_turn")
    assert [run.conversation_id for run in runs] == ["chat-42", "chat-42"]
    assert_runs_match(truth("langsmith-openai", "multi_turn"), "langsmith-openai", runs)


def test_a_metadata_entry_is_read_after_the_keys_that_name_a_conversation() -> None:
    assert conversation_id_of({"acme.metadata.sessionId": "s-1"}) == "s-1"
    assert conversation_id_of({"acme.metadata.session_id": "s-1", "acme.metadata.thread_id": "t-1"}) == "t-1"
    assert conversation_id_of({"session.id": "s-2", "acme.metadata.thread_id": "t-1"}) == "s-2"
    assert conversation_id_of({"acme.metadata.thread_count": 3, "acme.thread_id": "t-1"}) is None


def test_a_tool_s_status_message_under_the_kind_key_s_prefix_says_it_failed() -> None:
    # Langfuse JS writes `langfuse.observation.status_message` (and level ERROR) on a failed tool.
    runs = rebuilt("langfuse-langchainjs", "failing_tool")
    assert [call.error for run in runs for call in run.tool_calls] == ["Error: weather service unavailable"]
    assert_runs_match(truth("langfuse-langchainjs", "failing_tool"), "langfuse-langchainjs", runs)


def test_a_run_is_named_by_its_own_name_key_not_by_the_one_naming_the_run_it_is_in() -> None:
    # Genkit Go's flow inside a tool of another flow carries `genkit:metadata:flow:name` (the outer
    # flow's) beside its own `genkit:name`.
    runs = rebuilt("genkit-go", "nested")
    assert [run.agent_name for run in runs] == ["trip_planner", "weather_agent"]
    assert_runs_match(truth("genkit-go", "nested"), "genkit-go", runs)


@pytest.mark.parametrize("scenario", ["tool_then_answer", "two_agents", "failing_tool", "dict_result"])
def test_agent_runs_recording_their_request_and_answer_under_the_kind_key_s_prefix_are_believed(
    scenario: str,
) -> None:
    # MLflow's CrewAI autolog marks the agent's span AGENT beside `mlflow.spanInputs` and
    # `mlflow.spanOutputs`, with no model or tool span under it (its calls are in the conversation
    # its task's span keeps); CrewAI's own `entity_type` field names the crew and the agent too.
    runs = rebuilt("mlflow-crewai", scenario)
    assert runs and {run.convention for run in runs} == {"inferred:mlflow.spanType"}
    assert_runs_match(truth("mlflow-crewai", scenario), "mlflow-crewai", runs)


def test_the_one_argument_named_for_the_request_holding_an_object_gives_the_request_it_holds() -> None:
    task = '{"task": {"description": "What is the weather?", "id": "t-1", "name": null}, "context": ""}'
    assert reduced_text(task, "input") == "What is the weather?"
    # Two objects that may each hold the request: kept as it is.
    both = '{"task": {"description": "a"}, "query": {"text": "b"}}'
    assert reduced_text(both, "input") == both


def test_the_one_field_of_a_result_named_for_the_answer_is_the_answer() -> None:
    # AG2's agent under MLflow records what it replied as `{"message", "sender", "valid"}`.
    assert reduced_text('{"message": "Bonjour !", "sender": "weather_agent", "valid": true}', "output") == (
        "Bonjour !"
    )
    both = '{"message": "a", "answer": "b"}'
    assert reduced_text(both, "output") == both
    runs = rebuilt("mlflow-ag2", "no_tool")
    assert [run.output for run in runs] == ["Bonjour !"]
    assert_runs_match(truth("mlflow-ag2", "no_tool"), "mlflow-ag2", runs)


@pytest.mark.parametrize("corpus", ["haystack-builtin", "mlflow-haystack"])
def test_an_agent_span_with_unread_spans_under_it_is_not_believed_by_what_it_records(corpus: str) -> None:
    # A Haystack pipeline's component marked `haystack.component.type = Agent` (and `"AGENT"` by
    # MLflow) records its input and output; its agent's steps under it carry no kind key: its work
    # is there, unread, and its run is not read from the component's records alone.
    runs = rebuilt(corpus, "in_pipeline")
    assert not [run for run in runs if run.convention.startswith("inferred:") and not run.tool_calls]
