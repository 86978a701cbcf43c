"""Runs from traces of a tracer that records each function's call (MLflow's autolog): the agent
object's fields, the call's arguments by parameter name, the value it returned as an object's
fields. Read by the rules every convention shares and the shipped MLflow description, on traces
captured from real packages (tests/fixtures/traces)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from otel_scorers.conventions.formats.recorded_call import call_arguments
from otel_scorers.model import AgentRun
from otel_scorers.runs.explain import explain_files, explanation_lines
from otel_scorers.runs.otlp_files import InputProblem, read_spans
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.runs.run_text import FROM_CONVERSATION_AROUND, FROM_STRUCTURE, reduced_text
from tests.runs.fixture_runs import runs_of

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
PARIS = "What is the weather in Paris?"
ANSWER = "It is sunny and 21°C in Paris."


def test_an_agent_span_named_by_its_class_is_named_by_the_agent_objects_name_field() -> None:
    # `ToolCallingAgent.run` / `CodeAgent.run`: the class; autolog records the agent's `name` field.
    assert [run.agent_name for run in runs_of("mlflow-smolagents", "nested")] == ["manager", "weather_agent"]
    assert [run.agent_name for run in runs_of("mlflow-smolagents", "code_agent")] == ["code_weather_agent"]


def test_a_workflow_agent_named_by_its_class_is_named_by_the_agent_its_result_names() -> None:
    # `FunctionAgent.run` / `ReActAgent.run`: the agent's name is only in the result it returns.
    assert [run.agent_name for run in runs_of("mlflow-llamaindex", "tool_then_answer")] == ["weather_agent"]
    assert [run.agent_name for run in runs_of("mlflow-llamaindex", "react_agent")] == ["react_weather_agent"]


def test_an_answer_returned_as_a_wrapped_values_fields_is_its_value() -> None:
    (run,) = runs_of("mlflow-smolagents", "dict_result")  # {"_value": "Paris: 21°C, ..."}
    assert run.output == "Paris: 21°C, sunny, no wind."
    assert run.text_sources.get("output") == FROM_STRUCTURE


def test_an_answer_held_as_the_assistant_message_of_a_frameworks_result_object_is_its_text() -> None:
    # {"result": {"response": {"role": "assistant", "blocks": [...]}, "tool_calls": [...], ...}}
    (run,) = runs_of("mlflow-llamaindex", "tool_then_answer")
    assert (run.input, run.output) == (PARIS, ANSWER)
    assert run.text_sources.get("output") == FROM_STRUCTURE


def test_a_tool_call_recorded_by_its_keyword_arguments_has_those_arguments() -> None:
    (run,) = runs_of("mlflow-llamaindex", "two_tools")  # {"kwargs": {"city": "Paris"}}
    assert [(call.name, call.arguments) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"city": "Paris"}),
    ]


def test_a_tool_result_recorded_as_a_tool_output_object_is_the_text_the_model_was_given() -> None:
    (run,) = runs_of("mlflow-llamaindex", "dict_result")
    assert [(call.name, call.result, call.state) for call in run.tool_calls] == [
        ("get_weather_report", {"city": "Paris", "temp_c": 21, "sunny": True, "wind": None}, "ok")
    ]
    (failed,) = runs_of("mlflow-llamaindex", "failing_tool")
    assert [(call.name, call.arguments, call.result, call.state) for call in failed.tool_calls] == [
        ("get_weather", {"city": "Paris"}, None, "error")
    ]


def smolagents_run_with_its_tool_span_named(scenario: str) -> AgentRun:
    """The MLflow smolagents run, its tool span named by the tool it ran: the span autolog writes
    names the method it wrapped (`SimpleTool.__call__`), which says no tool (the run then lists its
    calls as missing: tests/runs/test_tool_span_named_by_its_implementation.py)."""
    spans = [
        replace(span, name="get_weather") if span.name == "SimpleTool.__call__" else span
        for span in read_spans(TRACES / "mlflow-smolagents" / f"{scenario}.json", [])
    ]
    (run,) = build_runs(spans)
    return run


def test_a_tool_result_returned_as_a_wrapped_values_fields_is_its_value() -> None:
    run = smolagents_run_with_its_tool_span_named("tool_then_answer")  # {"_value": "Sunny, 21°C"}
    assert [call.result for call in run.tool_calls] == ["Sunny, 21°C"]


def test_an_agent_given_its_task_object_was_asked_the_tasks_description() -> None:
    runs = runs_of("mlflow-crewai", "two_agents")
    assert [run.input for run in runs] == [
        PARIS,
        "Write a one-line travel tip for Paris from the weather report.",
    ]


def test_a_tool_call_recorded_beside_its_wrappers_own_parameters_has_the_keyword_arguments() -> None:
    # smolagents' Tool.__call__: {"sanitize_inputs_outputs": true, "kwargs": {"city": "Paris"}}
    run = smolagents_run_with_its_tool_span_named("tool_then_answer")
    assert [call.arguments for call in run.tool_calls] == [{"city": "Paris"}]
    # The loop-ending call with the answer as its argument is how the agent answered.
    (greeting,) = runs_of("mlflow-smolagents", "no_tool")
    assert (greeting.output, greeting.tool_calls) == ("Bonjour !", ())


def test_a_run_without_model_or_tool_spans_has_the_tool_calls_of_the_conversation_its_task_keeps() -> None:
    # CrewAI's autolog writes no tool or model span: the task span around the agent's holds the
    # agent's messages (chat-completions tool calls, tool messages) in its TaskOutput.
    (run,) = runs_of("mlflow-crewai", "two_tools")
    assert [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok"),
        ("get_time", {"city": "Paris"}, "14:05", "ok"),
    ]
    assert run.text_sources.get("tool_calls") == FROM_CONVERSATION_AROUND  # said where they came from
    (failed,) = runs_of("mlflow-crewai", "failing_tool")  # sent back as "Error executing tool: ..."
    assert [(call.name, call.result, call.state, call.error) for call in failed.tool_calls] == [
        ("get_weather", None, "error", "weather service unavailable")
    ]


def test_explain_says_a_runs_tool_calls_came_from_the_conversation_around_it() -> None:
    problems: list[InputProblem] = []
    lines = [
        line
        for explanation in explain_files([TRACES / "mlflow-crewai" / "tool_then_answer.json"], problems)
        for line in explanation_lines(explanation)
    ]
    assert not problems
    (run_line,) = [line for line in lines if line.startswith("  run ")]
    assert run_line.startswith("  run Weather Reporter ")
    assert f"tool_calls {FROM_CONVERSATION_AROUND}" in run_line


def test_only_keyword_arguments_a_call_was_given_alone_are_taken_for_the_tools_arguments() -> None:
    assert call_arguments({"kwargs": {"city": "Paris"}}) == {"city": "Paris"}
    assert call_arguments({"args": [], "kwargs": {"city": "Paris"}}) == {"city": "Paris"}
    # A function's own parameter beside an empty `**kwargs`, or positional arguments: kept whole.
    assert call_arguments({"query": "Louvre", "kwargs": {}}) == {"query": "Louvre", "kwargs": {}}
    assert call_arguments({"args": ["Paris"], "kwargs": {"unit": "C"}}) == {
        "args": ["Paris"],
        "kwargs": {"unit": "C"},
    }


def test_an_answer_in_json_that_holds_no_assistant_message_is_kept_as_the_agent_gave_it() -> None:
    answer = '{"answer": "Sunny", "confidence": 0.9}'
    assert reduced_text(answer, "output") == answer
    asked = '{"request": {"role": "user", "content": "What is the weather?"}, "id": 3}'
    assert reduced_text(asked, "output") == asked  # a user's message is no answer
    assert reduced_text(asked, "input") == "What is the weather?"


def test_an_answer_returned_beside_a_result_objects_private_fields_is_its_text() -> None:
    # Pydantic AI's AgentRunResult: {"output": "...", "_output_tool_name": null, "_state": {...}, ...}
    (run,) = runs_of("mlflow-pydantic-ai", "tool_then_answer")
    assert (run.input, run.output) == (PARIS, ANSWER)
    assert run.text_sources.get("output") == FROM_STRUCTURE
    # An object's public field beside the answer keeps it whole: it may be the agent's JSON answer.
    answer = '{"answer": "Sunny", "_id": 3, "confidence": 0.9}'
    assert reduced_text(answer, "output") == answer


def test_a_module_span_named_by_the_method_traced_is_named_by_the_modules_class() -> None:
    # DSPy's `ReAct.forward`: a module has no name of its own, its class is the agent's.
    assert [run.agent_name for run in runs_of("mlflow-dspy", "two_runs")] == ["ReAct", "ReAct"]


def test_an_answer_returned_beside_the_steps_its_framework_records_is_its_text() -> None:
    # DSPy's prediction: {"trajectory": {...}, "reasoning": "...", "answer": "..."}, under a tracer
    # whose scope names no framework (MLflow's autolog).
    (run,) = runs_of("mlflow-dspy", "tool_then_answer")
    assert (run.input, run.output) == (PARIS, ANSWER)
    assert run.text_sources.get("output") == FROM_STRUCTURE
    (failed,) = runs_of("mlflow-dspy", "failing_tool")
    assert failed.output is not None and failed.output.startswith("Sorry, I could not get the weather")


def test_a_model_call_seen_by_two_layers_counts_once_with_the_model_and_tokens_the_lower_one_names() -> None:
    # DSPy's `Predict.forward` (an LLM span naming no model) around the `LM.__call__` that called it.
    runs = runs_of("mlflow-dspy", "two_runs")
    assert [run.models for run in runs] == [("openai/gpt-4o-mini",), ("openai/gpt-4o-mini",)]
    # The OpenAI Agents SDK's `Response` span around the OpenAI client's, which counts the tokens:
    # two calls of 20 input and 10 output tokens each.
    (run,) = runs_of("mlflow-openai-agents", "responses_api")
    assert (run.models, run.usage.input_tokens, run.usage.output_tokens) == (("gpt-4o-mini",), 40, 20)
