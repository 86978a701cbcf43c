"""Instrumentations known by what they write, not by the name of their tracer: each learned
fixture of Langfuse, LiteLLM, OpenLIT's MCP agent and Semantic Kernel, every instrumentation
scope renamed to one no reader knows (a tracer renamed, forked, or a version nobody showed us),
yields the runs it yields as captured: read by the keys and span names the instrumentation or
the framework writes on every span (Langfuse's `langfuse.observation.type`, LiteLLM's
`litellm.call_id` and `raw_gen_ai_request`, the OpenAI Agents SDK's `mcp_list_tools`, Semantic
Kernel's `sk.available_functions`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from otel_scorers.model import AgentRun
from tests.runs.fixture_runs import runs_in
from tests.runs.test_framework_facts_any_instrumentation import TRACES, renamed_scope, rewritten, scenarios


def full_view(run: AgentRun, reader: bool = True) -> tuple[object, ...]:
    """What a scorer sees of the run, and (`reader`) which reader read it."""
    return (
        run.convention if reader else None,
        run.agent_name,
        run.input,
        run.output,
        [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls],
        [(handoff.from_agent, handoff.to_agent) for handoff in run.handoffs],
        run.models,
        run.usage,
        run.conversation_id,
        run.status,
    )


def assert_same_runs_under_any_scope(corpus: str, directory: Path, same_reader: bool = True) -> None:
    """Every scenario of the corpus, its scopes renamed, yields the runs it yields as captured,
    read by the same reader unless the corpus's reader is known by its scope (`same_reader`)."""
    read = 0
    for scenario in scenarios(corpus):
        seen = [full_view(run, same_reader) for run in runs_in(TRACES / corpus / f"{scenario}.json")]
        renamed = rewritten(corpus, scenario, renamed_scope("acme.tracer"), directory)
        assert [full_view(run, same_reader) for run in runs_in(renamed)] == seen, scenario
        read += len(seen)
    assert read, corpus


@pytest.mark.parametrize("corpus", ["langfuse", "langfuse-haystack", "langfuse-langchain"])
def test_langfuse_spans_under_a_renamed_tracer_are_read_by_their_observation_type(
    corpus: str, tmp_path: Path
) -> None:
    # Langfuse writes `langfuse.observation.*` on every span it records, whichever tracer: its
    # description's second entry reads them under any scope.
    assert_same_runs_under_any_scope(corpus, tmp_path)


@pytest.mark.parametrize("corpus", ["litellm-otel", "litellm-otel-request-span", "litellm-otel-semconv"])
def test_litellms_call_spans_under_a_renamed_tracer_are_model_calls_by_their_names(
    corpus: str, tmp_path: Path
) -> None:
    # `litellm_request` (with its `litellm.call_id`) and `raw_gen_ai_request` are LiteLLM's own
    # spans: without them every model call of the run is lost (2 of 12 runs right).
    assert_same_runs_under_any_scope(corpus, tmp_path)


def test_the_openai_agents_sdks_listing_of_mcp_tools_is_no_call_under_a_renamed_tracer(
    tmp_path: Path,
) -> None:
    # OpenLIT's `execute_tool {server}` span for `mcp_list_tools` takes no arguments: read as a
    # call, it kept the unnamed agent spans around it from being the run's wrappers (6 phantom
    # runs, and the named run without its request, answer and calls).
    assert_same_runs_under_any_scope("openlit-mcp", tmp_path)


@pytest.mark.parametrize("corpus", ["semantic-kernel", "mlflow-semantic-kernel"])
def test_semantic_kernels_function_loop_names_its_runs_framework_under_a_renamed_tracer(
    corpus: str, tmp_path: Path
) -> None:
    # Nothing on an agent's or a tool's span is Semantic Kernel's own; the loop between them is
    # (`AutoFunctionInvocationLoop`, `sk.available_functions`): by it the run's calls are named
    # by their function (`WeatherPlugin-get_weather` -> `get_weather`). Its spans are then read
    # by GenAI's keys (Semantic Kernel's reader is known by its scope) or, under MLflow's autolog,
    # by MLflow's, the tool spans named by their GenAI keys.
    assert_same_runs_under_any_scope(corpus, tmp_path, same_reader=False)


def test_a_tool_named_like_a_listing_that_was_given_arguments_is_a_call_under_a_renamed_tracer(
    tmp_path: Path,
) -> None:
    # Only the name and taking no arguments say a listing when no scope names the framework: an
    # agent's own tool of that name, called with arguments, ran.
    def renamed_with_arguments(scope: dict[str, Any], span: dict[str, Any]) -> None:
        scope["name"] = "acme.tracer"
        keys = {attribute["key"]: attribute["value"] for attribute in span.get("attributes", [])}
        if keys.get("gen_ai.tool.name") == {"stringValue": "mcp_list_tools"}:
            span["attributes"].append(
                {"key": "gen_ai.tool.call.arguments", "value": {"stringValue": '{"server": "weather"}'}}
            )

    runs = runs_in(rewritten("openlit-mcp", "no_tool", renamed_with_arguments, tmp_path))
    calls = [(call.name, call.arguments) for run in runs for call in run.tool_calls]
    assert calls == [("mcp_list_tools", {"server": "weather"})]


def test_openllmetrys_haystack_pipeline_is_no_run_by_its_name_under_a_renamed_tracer(tmp_path: Path) -> None:
    # OpenLLMetry names every Haystack pipeline's workflow span `haystack_pipeline`: read as a
    # run, it answered the pipeline's output keys ('replies') in place of its agents' runs.
    assert_same_runs_under_any_scope("openllmetry-haystack", tmp_path)


def test_openllmetry_spans_bridged_to_openinference_keep_their_kinds_under_a_renamed_tracer(
    tmp_path: Path,
) -> None:
    # OpenInference's processor for OpenLLMetry spans rewrites a workflow `{entity}.workflow` into
    # a CHAIN and a task `{entity}.task` into a TOOL named after the entity: those say the kind the
    # name kept, whatever the tracer's name. Read by the scope, the graphs were no runs (0 of 15).
    assert_same_runs_under_any_scope("openinference-openllmetry-langgraph", tmp_path)
