"""Frameworks' own tracing read with their shipped descriptions withheld: each corpus stands for a
framework whose vocabulary the project never saw, read from what its traces show
(`conventions/inferred.py`), one rule at a time, by the fixture tests' own comparison."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from otel_scorers import conventions
from otel_scorers.cli.main import main
from otel_scorers.model import AgentRun
from otel_scorers.runs.otlp_files import InputProblem, runs_from_files
from otel_scorers.runs.run_text import reduced_text
from tests.conventions.test_fixture_runs import assert_runs_match

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"


@pytest.fixture(autouse=True)
def no_shipped_descriptions() -> Iterator[None]:
    conventions.use_descriptions((), withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
    yield
    conventions.use_descriptions(())


def rebuilt(corpus: str, scenario: str) -> list[AgentRun]:
    problems: list[InputProblem] = []
    path = TRACES / corpus / f"{scenario}.json"
    assert path.is_file(), path
    runs = runs_from_files([path], problems)
    assert not problems, problems
    return sorted(runs, key=lambda run: run.start_ns)


def assert_read_as_written(corpus: str, scenario: str, runs: list[AgentRun]) -> None:
    truth = json.loads((TRACES / corpus / f"{scenario}.truth.json").read_text())
    assert_runs_match(truth, corpus, runs)


@pytest.mark.parametrize("scenario", ["tool_then_answer", "nested", "multi_turn", "failing_tool"])
def test_a_kind_key_naming_agents_tools_and_generations_is_read_with_the_keys_under_its_prefix(
    scenario: str,
) -> None:
    # Langfuse's `langfuse.observation.type` (agent, tool, generation): the request, the answer,
    # the tools' arguments and results under `langfuse.observation.`, the session in `session.id`.
    runs = rebuilt("langfuse", scenario)
    assert {run.convention for run in runs} == {"inferred:langfuse.observation.type"}
    assert_read_as_written("langfuse", scenario, runs)


@pytest.mark.parametrize("scenario", ["tool_then_answer", "nested", "dict_result", "multi_turn"])
def test_a_kind_key_of_colons_finds_its_keys_under_a_shorter_prefix_and_decodes_json_text(
    scenario: str,
) -> None:
    # Genkit's `genkit:metadata:subtype` (flow, tool, model): its input, output and name are
    # `genkit:input` ... (under `genkit:`, not `genkit:metadata:`), strings with their quotes.
    runs = rebuilt("genkit", scenario)
    assert {run.convention for run in runs} == {"inferred:genkit:metadata:subtype"}
    assert_read_as_written("genkit", scenario, runs)


@pytest.mark.parametrize("scenario", ["tool_then_answer", "nested", "two_runs"])
def test_kind_values_written_as_json_make_every_value_read_as_json(scenario: str) -> None:
    # MLflow's `mlflow.spanType` is '"AGENT"': its `mlflow.spanInputs` / `mlflow.spanOutputs`.
    runs = rebuilt("mlflow", scenario)
    assert {run.convention for run in runs} == {"inferred:mlflow.spanType"}
    assert_read_as_written("mlflow", scenario, runs)


def test_a_kind_key_naming_runs_alone_is_believed_when_model_calls_sit_under_them() -> None:
    # Spring AI's `spring.ai.kind` names the ChatClient call (`chat_client`) and its advisors; in a
    # run without tools no value names a call: the GenAI reader's chat spans under it do.
    runs = rebuilt("spring-ai", "no_tool")
    assert [run.convention for run in runs] == ["inferred:spring.ai.kind"]
    assert_read_as_written("spring-ai", "no_tool", runs)


@pytest.mark.parametrize("scenario", ["tool_then_answer", "agent_in_tool", "multi_turn"])
def test_a_kind_key_naming_tools_and_model_calls_alone_finds_its_runs_by_the_shared_rules(
    scenario: str,
) -> None:
    # MLflow's LangChain autolog marks its spans CHAIN, CHAT_MODEL, TOOL: no agent. Its graph is
    # the run by LangChain's own metadata, as for every reader; its text under `mlflow.`.
    runs = rebuilt("mlflow-langchain", scenario)
    assert {run.convention for run in runs} == {"inferred:mlflow.spanType"}
    assert_read_as_written("mlflow-langchain", scenario, runs)


@pytest.mark.parametrize("scenario", ["tool_then_answer", "two_tools", "failing_tool"])
def test_agent_spans_taking_turns_in_a_conversation_are_not_read_as_runs(scenario: str) -> None:
    # AG2's chat under MLflow: a span per message an agent receives, side by side
    # (weather_agent, user, weather_agent): which is the run the kinds do not say.
    assert rebuilt("mlflow-ag2", scenario) == []


def test_a_run_recorded_with_its_arguments_by_name_is_read_for_the_one_named_for_the_request() -> None:
    # smolagents' second turn under MLflow records `{"task": "Do I need an umbrella?", "reset": false}`.
    runs = rebuilt("mlflow-smolagents", "multi_turn")
    assert [run.input for run in runs] == ["What is the weather in Paris?", "Do I need an umbrella?"]
    assert_read_as_written("mlflow-smolagents", "multi_turn", runs)


def test_a_trace_a_reader_found_runs_in_is_read_by_that_reader_alone() -> None:
    # MLflow's `Agent.run` span (AGENT) around Pydantic AI's own agent span: Pydantic AI's reader
    # found the run; the wrapper's vocabulary is not inferred (nor is a second run read).
    for scenario in ("multi_turn", "nested"):
        runs = rebuilt("mlflow-pydantic-ai", scenario)
        assert {run.convention for run in runs} == {"pydantic_ai"}
        assert_read_as_written("mlflow-pydantic-ai", scenario, runs)


def test_a_request_among_named_arguments_is_the_one_text_argument_named_for_it() -> None:
    arguments = '{"user_prompt": "What is the weather?", "message_history": [], "usage": null}'
    assert reduced_text(arguments, "input") == "What is the weather?"
    assert reduced_text('{"user_input": "Hi"}', "input") == "Hi"
    # Two texts that may each be the request: kept as they are.
    both = '{"user_prompt": "a", "query": "b"}'
    assert reduced_text(both, "input") == both


def test_explain_says_the_reading_was_inferred_and_prints_the_description_that_reads_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = TRACES / "genkit" / "tool_then_answer.json"
    assert main(["runs", "--explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert "reader inferred:genkit:metadata:subtype" in out, out
    (line,) = [line for line in out.splitlines() if "inferred as this description" in line]
    printed = json.loads(line[line.index("{") :])
    # The description printed, given as the user's, reads the same runs under a name of theirs.
    inferred = rebuilt("genkit", "tool_then_answer")
    conventions.use_descriptions(
        [{**printed, "name": "mine"}], withheld=conventions.SHIPPED_DESCRIPTION_NAMES
    )
    described = rebuilt("genkit", "tool_then_answer")
    assert [run.convention for run in described] == ["mine"]
    assert [(run.agent_name, run.input, run.output, run.tool_calls) for run in described] == [
        (run.agent_name, run.input, run.output, run.tool_calls) for run in inferred
    ]


@pytest.mark.parametrize("scenario", ["tool_then_answer", "two_tools", "dict_result"])
def test_a_tool_span_a_reader_claims_reads_its_arguments_and_result_under_a_tool_key_of_another_namespace(
    scenario: str,
) -> None:
    # Spring AI 2's `execute_tool` spans are the GenAI reader's, their arguments and result kept
    # only in `spring.ai.tool.call.arguments` / `.result`: the shape of a tool's keys, read as such.
    runs = rebuilt("spring-ai20", scenario)
    assert runs and all(call.arguments is not None for run in runs for call in run.tool_calls)
    assert_read_as_written("spring-ai20", scenario, runs)


@pytest.mark.parametrize("scenario", ["tool_then_answer", "two_tools", "multi_turn", "failing_tool"])
def test_a_kind_key_on_every_span_of_an_agent_s_work_leaves_its_calls_to_a_second_kind_key(
    scenario: str,
) -> None:
    # VoltAgent's `entity.type = agent` is on the agent's span and on each step of it; its steps
    # are told by `span.type` (llm, tool, memory): the run is the span it does not mark, and a
    # call's name and model are under its kind's own word (`tool.name`, `llm.model`).
    runs = rebuilt("voltagent", scenario)
    assert runs and {run.convention for run in runs} == {"inferred:entity.type"}
    assert_read_as_written("voltagent", scenario, runs)


@pytest.mark.parametrize("scenario", ["tool_then_answer", "two_tools", "failing_tool", "dict_result"])
def test_a_name_kept_under_a_run_s_kind_names_the_run_a_call_is_in_not_the_call(scenario: str) -> None:
    # Genkit Go writes `genkit:metadata:flow:name` (the flow's) on its tool spans beside their own
    # `genkit:name`: the tool is named by the latter.
    runs = rebuilt("genkit-go", scenario)
    assert runs and all(call.name != run.agent_name for run in runs for call in run.tool_calls)
    assert_read_as_written("genkit-go", scenario, runs)


@pytest.mark.parametrize("scenario", ["tool_then_answer", "multi_turn", "two_tools"])
def test_a_call_s_prompt_and_completion_kept_whole_under_the_genai_names_are_its_input_and_output(
    scenario: str,
) -> None:
    # LangSmith's spans are the GenAI reader's (`gen_ai.operation.name`), a run's state and a
    # tool's arguments and result kept whole in `gen_ai.prompt` / `gen_ai.completion`.
    runs = rebuilt("langsmith-langchain", scenario)
    truth = json.loads((TRACES / "langsmith-langchain" / f"{scenario}.truth.json").read_text())["runs"]
    assert [(run.input, run.output) for run in runs] == [(run["input"], run["output"]) for run in truth]
    assert [[(call.name, call.arguments, call.result) for call in run.tool_calls] for run in runs] == [
        [(call["name"], call["arguments"], call["result"]) for call in run["tool_calls"]] for run in truth
    ]


@pytest.mark.parametrize("scenario", ["tool_then_answer", "nested", "failing_tool_handled"])
def test_an_agent_graph_its_framework_s_metadata_marks_is_named_as_its_span_is(scenario: str) -> None:
    # LangSmith names a graph's span after the graph (`weather_agent`, its `lc_agent_name`); the
    # GenAI reader that claims it names no agent.
    runs = rebuilt("langsmith-langchain", scenario)
    assert all(run.agent_name is not None for run in runs)
    assert_read_as_written("langsmith-langchain", scenario, runs)


@pytest.mark.parametrize("scenario", ["tool_then_answer", "nested", "failing_tool"])
def test_a_run_span_named_after_a_traced_method_names_the_object_before_it(scenario: str) -> None:
    # MLflow's autolog names a DSPy module's span after the method it traced (`ReAct.forward`).
    runs = rebuilt("mlflow-dspy", scenario)
    assert runs and not any(run.agent_name.endswith(".forward") for run in runs if run.agent_name)
    assert_read_as_written("mlflow-dspy", scenario, runs)


@pytest.mark.parametrize("corpus", ["mlflow-langchain", "mlflow-langgraph", "langfuse-langchainjs"])
def test_a_kind_key_naming_model_calls_alone_is_read_where_the_framework_s_metadata_marks_a_graph(
    corpus: str,
) -> None:
    # An agent that answered without a tool: the kind key names model calls (`CHAT_MODEL`,
    # `generation`) and no tool; LangChain's metadata marks the graph that is the run.
    runs = rebuilt(corpus, "no_tool")
    assert len(runs) == 1
    assert_read_as_written(corpus, "no_tool", runs)


@pytest.mark.parametrize("scenario", ["tool_then_answer", "multi_turn", "dict_result"])
def test_the_agent_s_name_its_run_recorded_names_it_and_a_user_msg_argument_is_the_request(
    scenario: str,
) -> None:
    # LlamaIndex's `FunctionAgent.run` under MLflow: the agent's name is only in the recorded
    # result (`{"result": {"current_agent_name": ...}}`), the request the `user_msg` argument.
    runs = rebuilt("mlflow-llamaindex", scenario)
    assert runs and all(run.agent_name != "FunctionAgent" for run in runs)
    assert_read_as_written("mlflow-llamaindex", scenario, runs)


def test_a_message_argument_named_msg_is_the_request() -> None:
    assert reduced_text('{"user_msg": "Hi", "chat_history": null, "memory": null}', "input") == "Hi"


def test_the_agent_s_name_its_run_recorded_is_read_from_the_generic_output_key_too(tmp_path: Path) -> None:
    # The same runs after a drift that keeps each run's output under the bare `output` key.
    from bench.drifts import drifted

    path, moved = drifted(TRACES / "mlflow-llamaindex" / "multi_turn.json", "bare-keys", tmp_path)
    assert moved
    runs = sorted(runs_from_files([path], []), key=lambda run: run.start_ns)
    assert [run.agent_name for run in runs] == ["weather_agent", "weather_agent"]


def test_a_kind_of_span_whose_kind_value_named_no_work_before_is_read_by_its_own_value() -> None:
    # MLflow names a LangChain graph's span and an agent's span after the agent: `weather_agent`,
    # of the same scope and number of keys, `"CHAIN"` on one and `"AGENT"` on the other. What the
    # first said is no reason to take the second for a span of no kind.
    rebuilt("mlflow-langchain", "failing_tool")
    runs = rebuilt("mlflow-litellm", "no_tool")
    assert [run.convention for run in runs] == ["inferred:mlflow.spanType"]
    assert_read_as_written("mlflow-litellm", "no_tool", runs)
