"""What a framework writes is read under any instrumentation, one nobody showed us too: the real
fixtures' traces, their instrumentation scope renamed so that it names no framework the project
knows (`openinference.instrumentation.smolagents` -> `openinference.instrumentation.acme`), are
rebuilt as their truth says, from what the trace itself holds (`conventions/frameworks.py`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from otel_scorers.model import AgentRun
from otel_scorers.runs.otlp_files import InputProblem, runs_from_files
from tests.conventions.test_fixture_runs import assert_run_matches

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
_FRAMEWORK_IN_SCOPE = re.compile(
    r"openai_agents|crewai|llama_index|llamaindex|smolagents|dspy|beeai|google_adk|gcp\.vertex\.agent"
    r"|autogen_agentchat|ag2|haystack|agno"
)


def renamed_runs(corpus: str, scenario: str, directory: Path) -> tuple[list[AgentRun], list[dict[str, Any]]]:
    """The scenario's runs rebuilt with every scope's framework renamed, and its truth's runs."""
    trace = json.loads((TRACES / corpus / f"{scenario}.json").read_text())
    for resource in trace["resourceSpans"]:
        for scoped in resource["scopeSpans"]:
            scope = scoped.get("scope", {})
            if scope.get("name"):
                scope["name"] = _FRAMEWORK_IN_SCOPE.sub("acme", scope["name"])
    path = directory / f"{scenario}.json"
    path.write_text(json.dumps(trace))
    problems: list[InputProblem] = []
    runs = sorted(runs_from_files([path], problems), key=lambda run: run.start_ns)
    assert not problems
    truth = json.loads((TRACES / corpus / f"{scenario}.truth.json").read_text())
    return runs, truth["runs"]


def assert_as_truth(corpus: str, scenario: str, directory: Path) -> list[AgentRun]:
    runs, truth = renamed_runs(corpus, scenario, directory)
    assert len(runs) == len(truth), [run.agent_name for run in runs]
    for run, expected in zip(runs, truth, strict=True):
        assert_run_matches(run, expected, corpus, scenario)
    return runs


def test_the_request_crewai_wraps_in_its_prompt_is_found_under_a_scope_naming_no_framework(
    tmp_path: Path,
) -> None:
    (run,) = assert_as_truth("crewai-openllmetry", "tool_then_answer", tmp_path)
    assert run.input == "What is the weather in Paris?"


def test_smolagents_final_answer_is_machinery_under_a_scope_naming_no_framework(tmp_path: Path) -> None:
    (run,) = assert_as_truth("openlit-smolagents", "no_content", tmp_path)
    assert [call.name for call in run.tool_calls] == ["get_weather"]


def test_an_agent_span_named_agent_dot_method_names_its_agent_under_any_scope(tmp_path: Path) -> None:
    # smolagents' `weather_agent.run`, CrewAI's `Weather Reporter._execute_core`, as OpenInference writes them.
    (smolagents_run,) = assert_as_truth("smolagents", "tool_then_answer", tmp_path)
    assert smolagents_run.agent_name == "weather_agent"
    reporter, writer = assert_as_truth("crewai-openinference", "two_agents", tmp_path)
    assert (reporter.agent_name, writer.agent_name) == ("Weather Reporter", "Travel Writer")


def test_an_openai_agents_handoff_is_one_run_under_any_openllmetry_scope(tmp_path: Path) -> None:
    # OpenLLMetry's `triage_agent → weather_agent.handoff` span, of kind `handoff`.
    (run,) = assert_as_truth("openai-agents-openllmetry", "handoff_after_tool", tmp_path)
    assert [(handoff.from_agent, handoff.to_agent) for handoff in run.handoffs] == [
        ("triage_agent", "weather_agent")
    ]


def test_logfires_openai_agents_spans_are_read_by_their_message_templates_under_any_scope(
    tmp_path: Path,
) -> None:
    # `Agent run: {name!r}`, `Function: {name}`, `Handoff: {from_agent} → {to_agent}`, ...
    (run,) = assert_as_truth("openai-agents-logfire", "handoff_after_tool", tmp_path)
    assert [call.name for call in run.tool_calls] == ["get_time", "get_weather"]
    (run,) = assert_as_truth("openai-agents-logfire-responses", "tool_then_answer", tmp_path)
    assert run.output


def test_crewai_agent_spans_are_known_by_crewais_own_keys_under_any_openinference_scope(
    tmp_path: Path,
) -> None:
    # The event bus's `Weather Reporter.What is the weather in Paris?.execute`, with
    # `task_description` and the agent's `graph.node.id` and `agent.backstory`.
    reporter, writer = assert_as_truth("crewai-openinference-events", "two_agents", tmp_path)
    assert (reporter.agent_name, reporter.input) == ("Weather Reporter", "What is the weather in Paris?")
    assert writer.agent_name == "Travel Writer"


def test_crewai_task_spans_are_the_runs_by_their_crewai_ids_under_any_openllmetry_scope(
    tmp_path: Path,
) -> None:
    # Without the crew span claimed by its `crewai.crew.id`, it would be a GenAI `invoke_agent` run.
    reporter, writer = assert_as_truth("crewai-openllmetry-alone", "two_agents", tmp_path)
    assert (reporter.agent_name, writer.agent_name) == ("Weather Reporter", "Travel Writer")


def test_a_smolagents_managed_agent_is_its_managers_call_by_its_run_span_keys_under_any_scope(
    tmp_path: Path,
) -> None:
    # The managed agent's `weather_agent.run` carries `smolagents.max_steps` and `smolagents.tools_names`.
    manager, _ = assert_as_truth("smolagents", "nested", tmp_path)
    assert [call.name for call in manager.tool_calls] == ["weather_agent"]


def test_llamaindex_workflow_spans_are_known_by_its_class_names_under_any_openinference_scope(
    tmp_path: Path,
) -> None:
    # `AgentWorkflow.run` over `AgentWorkflow.call_tool` steps and `FunctionTool.acall` tools.
    (run,) = assert_as_truth("llamaindex-openinference", "handoff", tmp_path)
    assert [(handoff.from_agent, handoff.to_agent) for handoff in run.handoffs] == [
        ("weather_agent", "time_agent")
    ]


def test_llamaindex_query_engine_workflows_are_not_runs_under_any_openllmetry_scope(tmp_path: Path) -> None:
    # `SentenceSplitter.workflow` and `MockEmbedding.workflow` are LlamaIndex's, not agents.
    (run,) = assert_as_truth("llamaindex-openllmetry-alone", "query_engine_tool", tmp_path)
    assert run.agent_name == "guide_agent"


def test_without_content_a_crewai_task_under_any_openllmetry_scope_misses_its_calls(tmp_path: Path) -> None:
    # OpenLLMetry writes no CrewAI tool spans: without the model's content, the calls are unknown.
    runs, _ = renamed_runs("crewai-openllmetry-alone", "two_agents", tmp_path)
    assert [sorted({"tool_calls", "tool_errors"} & run.missing) for run in runs] == [
        ["tool_calls", "tool_errors"],
        ["tool_calls", "tool_errors"],
    ]


def scenarios(corpus: str) -> list[str]:
    return sorted(path.name.removesuffix(".truth.json") for path in (TRACES / corpus).glob("*.truth.json"))


@pytest.mark.parametrize("scenario", scenarios("dspy-openinference"))
def test_a_dspy_agent_module_is_a_run_by_its_class_and_finish_ends_its_loop_under_any_scope(
    scenario: str, tmp_path: Path
) -> None:
    # `ReAct.forward` (a CHAIN span) is the run, named by its class; its `{tool}.__call__` spans
    # are named by the tool; `finish`, which returns "Completed.", is machinery: content hidden
    # too, where the run's framework (known by its module's class) says so.
    assert_as_truth("dspy-openinference", scenario, tmp_path)


@pytest.mark.parametrize("scenario", scenarios("beeai-openinference"))
def test_beeai_events_are_no_runs_and_its_final_answer_is_machinery_under_any_scope(
    scenario: str, tmp_path: Path
) -> None:
    # Its emitter events (`final_answer` AGENT spans with `metadata.path`) are records, not runs;
    # its `FinalAnswerTool` is known by its description, its tools' `{"input", "options"}` by the
    # component metadata BeeAI writes (`metadata.class_name`).
    assert_as_truth("beeai-openinference", scenario, tmp_path)


@pytest.mark.parametrize(
    ("corpus", "scenario"),
    [
        (corpus, scenario)
        for corpus in ("google-adk", "google-adk-legacy", "openinference-google-adk", "openlit-google-adk")
        for scenario in scenarios(corpus)
    ],
)
def test_google_adk_spans_are_known_by_its_event_keys_under_any_scope(
    corpus: str, scenario: str, tmp_path: Path
) -> None:
    # `gcp.vertex.agent.event_id` and the legacy schema's `llm_request` / `tool_call_args`: its
    # `{"result": value}` is unwrapped, its legacy `call_llm` spans are the model calls, and its
    # `transfer_to_agent` is a handoff, whichever scope wrote them.
    assert_as_truth(corpus, scenario, tmp_path)


@pytest.mark.parametrize("scenario", scenarios("autogen-openinference"))
def test_autogen_agent_spans_and_swarm_handoffs_are_read_under_any_scope(
    scenario: str, tmp_path: Path
) -> None:
    # `{agent}.on_messages_stream` names the agent; a `transfer_to_{agent}` tool described
    # `Handoff to {Agent}.` (AutoGen's default) is a handoff joining one run, not a tool call.
    assert_as_truth("autogen-openinference", scenario, tmp_path)


@pytest.mark.parametrize(
    ("corpus", "scenario"),
    [(corpus, scenario) for corpus in ("ag2-openinference", "ag2-legacy") for scenario in scenarios(corpus)],
)
def test_an_ag2_chat_is_one_run_under_any_scope(corpus: str, scenario: str, tmp_path: Path) -> None:
    # OpenInference's `{agent}.generate_reply` turns are no runs and `ag2.recipient.name` names
    # the chat's agent; AG2's own `conversation` span is the run, its `invoke_agent` replies turns.
    assert_as_truth(corpus, scenario, tmp_path)


@pytest.mark.parametrize(
    "scenario", [name for name in scenarios("haystack-openinference") if name != "no_content"]
)
def test_haystack_components_are_known_by_their_chat_message_reprs_under_any_scope(
    scenario: str, tmp_path: Path
) -> None:
    # `Agent.run` is a run and the generator's messages are read from `ChatMessage(_role=...)`
    # reprs, a pipeline names its agents, whichever scope wrote them.
    assert_as_truth("haystack-openinference", scenario, tmp_path)


def test_with_content_hidden_a_haystack_agent_under_an_unknown_scope_is_no_run(tmp_path: Path) -> None:
    # Only the reprs mark its spans; without them `Agent.run` is a CHAIN span of no known
    # framework: no run, rather than a guessed one.
    runs, _ = renamed_runs("haystack-openinference", "no_content", tmp_path)
    assert runs == []


@pytest.mark.parametrize("scenario", scenarios("agno-openllmetry"))
def test_agnos_tool_result_text_is_read_under_any_openllmetry_scope(scenario: str, tmp_path: Path) -> None:
    # `status='success' result='Sunny, 21°C' error=None ...`: its form is Agno's `ToolResult`.
    assert_as_truth("agno-openllmetry", scenario, tmp_path)


def test_without_content_an_agno_tool_under_any_openllmetry_scope_may_have_failed_unseen(
    tmp_path: Path,
) -> None:
    # Agno catches what a tool raised and ends its span OK: only the `ToolResult` text says so.
    # Without it, whether a call failed is unknown, the tool span known as Agno's by its system.
    runs, _ = renamed_runs("agno-openllmetry", "no_content", tmp_path)
    assert ["tool_errors" in run.missing for run in runs] == [True]
