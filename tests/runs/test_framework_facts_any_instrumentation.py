"""What LangChain, LangGraph and Semantic Kernel write is read under any instrumentation: each
trace captured from a real package (tests/fixtures/traces) is read again with what only its
instrumentation says taken away (its scope renamed to one no reader knows, its own agent marker
removed), and must yield the same runs, wherever the framework's own facts are in the trace."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from otel_scorers import conventions
from otel_scorers.conventions.frameworks import framework_name
from otel_scorers.model import AgentRun
from tests.runs.fixture_runs import runs_in

from ..conventions.test_fixture_runs import assert_runs_match

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
#: A span as OTLP/JSON has it, with its scope's name; changed in place.
Rewrite = Callable[[dict[str, Any], dict[str, Any]], None]


def rewritten(corpus: str, scenario: str, rewrite: Rewrite, directory: Path) -> Path:
    """The fixture with each span passed through `rewrite(scope, span)`."""
    trace = json.loads((TRACES / corpus / f"{scenario}.json").read_text())
    for resource_spans in trace["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                rewrite(scope_spans.setdefault("scope", {}), span)
    path = directory / f"{corpus}-{scenario}.json"
    path.write_text(json.dumps(trace))
    return path


def view(run: AgentRun) -> tuple[object, ...]:
    return (
        run.agent_name,
        run.input,
        run.output,
        [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls],
        [(handoff.from_agent, handoff.to_agent) for handoff in run.handoffs],
    )


def scenarios(corpus: str) -> list[str]:
    return sorted(path.name.removesuffix(".truth.json") for path in (TRACES / corpus).glob("*.truth.json"))


def renamed_scope(name: str) -> Rewrite:
    def rewrite(scope: dict[str, Any], span: dict[str, Any]) -> None:
        scope["name"] = name

    return rewrite


def assert_same_runs(corpus: str, rewrite: Rewrite, directory: Path) -> None:
    for scenario in scenarios(corpus):
        seen = [view(run) for run in runs_in(TRACES / corpus / f"{scenario}.json")]
        assert seen, scenario
        assert [view(run) for run in runs_in(rewritten(corpus, scenario, rewrite, directory))] == seen, (
            scenario
        )


@pytest.mark.parametrize(
    "corpus", ["langgraph-openinference", "langgraph-openllmetry", "openlit-langchain", "langsmith-langchain"]
)
def test_a_langgraph_trace_whose_instrumentation_scope_is_unknown_still_yields_the_same_runs(
    corpus: str, tmp_path: Path
) -> None:
    # OpenInference marks a LangChain tool named like an agent (`ask_weather_agent`) AGENT: its
    # `tool.name`, not its scope, says it is a tool; LangChain's metadata says which spans are
    # the graph's nodes and which the graph. LangSmith's spans are known by its own keys
    # (`langsmith.span.kind`), which no other instrumentation writes.
    assert_same_runs(corpus, renamed_scope("acme.tracer"), tmp_path)


def test_langchains_metadata_flattened_by_its_instrumentation_marks_the_agent_graph(tmp_path: Path) -> None:
    # Langfuse flattens LangChain's metadata into `langfuse.observation.metadata.{key}` (and the
    # root's into `langfuse.trace.metadata.{key}` on every span): without Langfuse's own `agent`
    # observation type, `lc_agent_name` / `ls_integration` without `langgraph_node` still mark
    # the graph, and nothing else.
    def chain_not_agent(scope: dict[str, Any], span: dict[str, Any]) -> None:
        for attribute in span.get("attributes", []):
            if attribute["key"] == "langfuse.observation.type" and attribute["value"] == {
                "stringValue": "agent"
            }:
                attribute["value"] = {"stringValue": "chain"}

    assert_same_runs("langfuse-langchain", chain_not_agent, tmp_path)


def test_semantic_kernels_function_names_are_read_under_any_instrumentation_that_names_it(
    tmp_path: Path,
) -> None:
    # Its functions are offered to the model as `{plugin}-{function}`, and its agents add
    # `instructions_override: null` to every call they make: Semantic Kernel's, whoever traced it.
    assert framework_name("semantic_kernel.functions.kernel_function") == "semantic_kernel"
    assert framework_name("acme.instrumentation.semantic_kernel") == "semantic_kernel"
    assert_same_runs("semantic-kernel", renamed_scope("acme.instrumentation.semantic_kernel"), tmp_path)


def test_a_call_carrying_semantic_kernels_added_argument_is_its_whatever_the_scope(tmp_path: Path) -> None:
    # Under a scope naming no framework, the argument only Semantic Kernel adds names the
    # framework of the call it is in: the inner agent's call is read by its function's name.
    path = rewritten("semantic-kernel", "agent_as_plugin", renamed_scope("acme.tracer"), tmp_path)
    _, inner = runs_in(path)
    assert [(call.name, call.arguments) for call in inner.tool_calls] == [("get_weather", {"city": "Paris"})]


#: OpenLLMetry's keys as a user who knows nothing of LangChain would describe them: which spans
#: are runs and tools, and which attributes hold their input and output.
TRACELOOP_KEYS_ONLY = """
- name: traceloop-keys
  marker_attributes: [traceloop.span.kind]
  run:
    when: {attributes: {traceloop.span.kind: [workflow, agent]}}
    agent_name: [traceloop.entity.name, {span: name}]
    input: traceloop.entity.input
    output: traceloop.entity.output
  tool:
    when: {attributes: {traceloop.span.kind: tool}}
    name: [traceloop.entity.name, {span: name}]
    arguments: traceloop.entity.input
    result: traceloop.entity.output
"""


@pytest.fixture
def traceloop_keys_only() -> Iterator[None]:
    conventions.use_descriptions(yaml.safe_load(TRACELOOP_KEYS_ONLY))
    yield
    conventions.use_descriptions(())


@pytest.mark.usefixtures("traceloop_keys_only")
@pytest.mark.parametrize("scenario", scenarios("langgraph-openllmetry"))
def test_what_langchains_callbacks_were_given_is_read_by_a_description_that_knows_only_the_keys(
    scenario: str,
) -> None:
    # The recorded callback arguments are LangChain's, not the instrumentation's: a chain's start
    # `{"inputs": {"messages": [...]}, "tags", "metadata", "kwargs"}` and end `{"outputs": ...}`,
    # a tool's start `{"input_str", "inputs", "kwargs": {"tool_call_id"}}`, its ToolMessage dump
    # `{"output": {"lc": 1, ..., "kwargs": {"content", "tool_call_id", "status"}}}`.
    truth_path = TRACES / "langgraph-openllmetry" / f"{scenario}.truth.json"
    runs = runs_in(truth_path.with_name(f"{scenario}.json"))
    assert {run.convention for run in runs} == {"traceloop-keys"}
    assert_runs_match(json.loads(truth_path.read_text()), "langgraph-openllmetry", runs)


#: The learned corpora of these frameworks whose instrumentation is not itself known by its scope
#: alone (MLflow's and Langfuse's descriptions are).
_READ_BY_WHAT_THE_FRAMEWORK_WRITES = [
    *(
        "pydantic-ai-v2",
        "pydantic-ai-v5",
        "pydantic-ai-v6",
        "pydantic-ai-openinference",
        "openlit-pydantic-ai",
    ),
    *("dspy-openinference", "beeai-openinference", "haystack-builtin"),
    *("agno-openinference", "agno-openllmetry", "openlit-agno"),
    *("google-adk", "google-adk-legacy", "openinference-google-adk", "openlit-google-adk"),
    *("strands-default", "strands-latest", "openinference-strands", "openlit-strands"),
    *("ag2", "ag2-legacy", "ag2-openinference", "autogen-builtin", "autogen-openinference"),
    # smolagents' step texts in the requests, LlamaIndex's handoff and query engine Response.
    *("otel-smolagents", "otel-llamaindex"),
]


@pytest.mark.parametrize("corpus", _READ_BY_WHAT_THE_FRAMEWORK_WRITES)
def test_every_scope_renamed_to_one_naming_nothing_yields_the_same_runs(corpus: str, tmp_path: Path) -> None:
    # DSPy's agent modules, BeeAI's component metadata, ADK's event keys, AutoGen's handoff
    # descriptions, AG2's chat turns, Agno's ToolResult text, Pydantic AI's and Strands' keys:
    # each framework's, whichever instrumentation wrote it (`conventions/frameworks.py`).
    assert_same_runs(corpus, renamed_scope("acme.tracer"), tmp_path)
