"""Facts an instrumentation keeps in a shape of its own are read wherever they are, on real traces:
a tool's result written as message parts of text, as Python's repr of the objects the tool
returned, a workflow whose kind key a span processor rewrote into another vocabulary's, and the
message a team hands an agent as its input. Expected values are the generators' truth files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from otel_scorers.conventions.formats import langchain
from otel_scorers.conventions.formats.python_repr import constructed_fields
from otel_scorers.model import AgentRun
from otel_scorers.runs.otlp_files import InputProblem, runs_from_files

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"


def read(case: str) -> tuple[list[AgentRun], list[dict[str, Any]]]:
    """The runs rebuilt from a fixture case, and its truth's runs."""
    problems: list[InputProblem] = []
    runs = list(runs_from_files([TRACES / f"{case}.json"], problems))
    truth = json.loads((TRACES / f"{case}.truth.json").read_text())
    return runs, truth["runs"]


def calls(run: AgentRun) -> list[tuple[str, Any]]:
    return [(call.name, call.result) for call in run.tool_calls]


def truth_calls(run: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(call["name"], call["result"]) for call in run["tool_calls"]]


def test_a_tool_result_written_as_message_parts_of_text_is_what_the_tool_returned() -> None:
    # LoongSuite writes AgentScope's tool response as GenAI parts: [{"type": "text", "content"}].
    for case in ("loongsuite-agentscope/tool_then_answer", "loongsuite-agentscope/dict_result"):
        runs, truth = read(case)
        assert [calls(run) for run in runs] == [truth_calls(run) for run in truth]


def test_a_command_returned_by_a_tool_and_written_as_its_repr_is_read_as_its_tool_message() -> None:
    runs, truth = read("loongsuite-deepagents/sub_agent")
    assert [calls(run) for run in runs] == [truth_calls(run) for run in truth]


def test_an_objects_repr_is_read_as_its_fields_without_running_anything() -> None:
    text = "Command(update={'messages': [ToolMessage(content='Sunny', tool_call_id='call_1')]})"
    assert constructed_fields(text) == {
        "update": {"messages": [{"content": "Sunny", "tool_call_id": "call_1"}]}
    }
    assert langchain.tool_message(text) == {"content": "Sunny", "tool_call_id": "call_1"}
    for kept in (
        "Command(update=__import__('os').system('true'))",  # a call of no class: not read
        "Command('positional')",
        "Command(update={'a': 1}",  # unclosed
        "command(update=1)",  # a function's call, not a class's
    ):
        assert constructed_fields(kept) is None


def test_workflows_rewritten_into_another_vocabulary_are_runs_and_their_steps_no_tool_calls() -> None:
    # OpenInference's processor for OpenLLMetry spans makes a LangGraph workflow a CHAIN and each
    # of its steps (`model.task`, `tools.task`) a TOOL; the names keep OpenLLMetry's kinds.
    for case in (
        "openinference-openllmetry-langgraph/tool_then_answer",
        "openinference-openllmetry-langgraph/react_agent",
        "openinference-openllmetry-langgraph/nested",
        "openinference-openllmetry-langgraph/no_content",
    ):
        runs, truth = read(case)
        assert [run.agent_name for run in runs] == [run["agent_name"] for run in truth], case
        assert [[call.name for call in run.tool_calls] for run in runs] == [
            [call["name"] for call in run["tool_calls"]] for run in truth
        ], case


def test_an_agent_handed_another_agents_message_has_that_message_as_its_input() -> None:
    runs, truth = read("loongsuite-autogen/round_robin")
    assert [(run.agent_name, run.input) for run in runs] == [
        (run["agent_name"], run["input"]) for run in truth
    ]


def test_a_tool_span_recording_a_handoffs_call_is_no_tool_call_of_the_run() -> None:
    # LoongSuite records AutoGen's `transfer_to_weather_agent` as an `execute_tool` span.
    runs, truth = read("loongsuite-autogen/swarm")
    assert [calls(run) for run in runs] == [truth_calls(run) for run in truth]
    assert [run.final_agent for run in runs] == [run["final_agent"] for run in truth]


def test_a_genai_span_a_processor_labelled_with_an_openinference_kind_is_read_as_written() -> None:
    # OpenInference's processor for OpenLIT spans adds a kind (a model call that asked for a tool
    # becomes a TOOL) and none of OpenInference's content keys: the GenAI keys hold the run.
    for case in (
        "openinference-openlit-langgraph/tool_then_answer",
        "openinference-openlit-langgraph/two_runs",
    ):
        runs, truth = read(case)
        assert [(run.agent_name, calls(run)) for run in runs] == [
            (run["agent_name"], truth_calls(run)) for run in truth
        ], case
