"""`AgentRun.context`: what grounded the answer, read from the trace (tool results, retrieved
documents, system instructions, each with its source) or given by the binding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from otel_scorers import AgentRun, ScoringSpanProcessor, bind, load_config
from otel_scorers.errors import ConfigError
from otel_scorers.model import ContextItem
from otel_scorers.pipeline.scorer_call import evaluate
from otel_scorers.runs.otlp_files import runs_from_files
from tests.conftest import RunRecorder, Telemetry
from tests.conventions.test_fixture_runs import DOCUMENTS, TOLERATED, TOOL_RESULTS, pending_marks

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"
KIND = "openinference.span.kind"


def fixture_runs(path: Path) -> list[AgentRun]:
    problems: list[Any] = []
    runs = sorted(runs_from_files([path], problems), key=lambda run: run.start_ns)
    assert not problems
    return runs


def cases_with_tool_results() -> list[Any]:
    cases = []
    for truth_path in sorted(TRACES.glob("*/*.truth.json")):
        truth = json.loads(truth_path.read_text())
        if truth["scenario"] == "no_content":
            continue
        if any(not call["error"] for run in truth["runs"] for call in run["tool_calls"]):
            framework = truth_path.parent.name
            marks = pending_marks(truth_path, TOOL_RESULTS)
            cases.append(pytest.param(truth_path, id=f"{framework}/{truth['scenario']}", marks=marks))
    return cases


@pytest.mark.parametrize("truth_path", cases_with_tool_results())
def test_every_successful_tool_result_the_generator_scripted_is_in_the_runs_context(truth_path: Path) -> None:
    truth = json.loads(truth_path.read_text())
    runs = fixture_runs(truth_path.with_name(truth_path.name.replace(".truth.json", ".json")))
    spared = TOLERATED.get((truth_path.parent.name, truth["scenario"]), ("", frozenset()))[1]
    if "inner_run" in spared:
        truth["runs"] = truth["runs"][:1]  # the trace holds the outer run only
    for run, expected in zip(runs, truth["runs"], strict=True):
        if "tool_calls" in spared and not run.tool_calls:  # none carried, as the fixture tests tolerate
            continue
        if {"tool_calls", "tool_results"} & run.missing:  # a trace that could not carry them
            assert not run.context or all(item.kind != "tool_result" for item in run.context)
            continue
        results = [item for item in run.context if item.kind == "tool_result"]
        wanted = [call for call in expected["tool_calls"] if not call["error"] and call["result"] is not None]
        assert [item.source for item in results] == [call["name"] for call in wanted], run.agent_name
        for item, call in zip(results, wanted, strict=True):
            if isinstance(call["result"], str):
                assert item.text == call["result"]
            else:  # a structured result travels as its JSON text
                assert json.loads(item.text) == call["result"]


#: Cases whose retrieved documents are not read yet: expected to fail.
DOCUMENTS_PENDING = {
    "mlflow-llamaindex/query_engine_tool": "a `conventions:` description reads no retriever spans",
    "openlit-llamaindex/query_engine_tool": "the query engine's retrieval is a trace of its own, "
    "which no rule joins to the run joined from the agent's model calls",
    "otel-llamaindex/query_engine_tool": "OpenTelemetry's LlamaIndex instrumentation records each "
    "retrieved document's id and score, not its text: the documents are not in the trace",
}


def cases_with_documents() -> list[Any]:
    cases = []
    for truth_path in sorted(TRACES.glob("*/*.truth.json")):
        truth = json.loads(truth_path.read_text())
        if any(run.get("documents") for run in truth["runs"]):
            case = f"{truth_path.parent.name}/{truth['scenario']}"
            reason = DOCUMENTS_PENDING.get(case)
            marks = (
                [pytest.mark.xfail(reason=reason, strict=True)]
                if reason
                else pending_marks(truth_path, DOCUMENTS)
            )
            cases.append(pytest.param(truth_path, id=case, marks=marks))
    return cases


@pytest.mark.parametrize("truth_path", cases_with_documents())
def test_every_document_the_generators_retriever_returned_is_in_the_runs_context(truth_path: Path) -> None:
    truth = json.loads(truth_path.read_text())
    runs = fixture_runs(truth_path.with_name(truth_path.name.replace(".truth.json", ".json")))
    for run, expected in zip(runs, truth["runs"], strict=True):
        documents = [item.text for item in run.context if item.kind == "document"]
        assert documents == expected.get("documents", []), run.agent_name


#: The instructions each fixture's generator gave its agent (tests/fixtures/generate/*).
INSTRUCTIONS = {
    "openai-v2": ("gen_ai.system_instructions", "You answer questions about the weather and the time."),
    "pydantic-ai-v6": ("gen_ai.system_instructions", "You answer questions about the weather and the time."),
    "pydantic-ai-v2": ("gen_ai.system_instructions", "You answer questions about the weather and the time."),
    "openai-agents": ("system message", "You answer questions about the weather. Use the tools."),
    "vercel-ai": ("gen_ai.system_instructions", "You answer questions about the weather. Use the tools."),
    "vercel-ai-legacy": ("system message", "You answer questions about the weather. Use the tools."),
    "strands-latest": (
        "gen_ai.system_instructions",
        "You are a helpful assistant. Use the tools when they help.",
    ),
    "strands-default": ("system message", "You are a helpful assistant. Use the tools when they help."),
}


@pytest.mark.parametrize("framework", sorted(INSTRUCTIONS))
def test_the_agents_system_instructions_come_first_with_where_they_were_read(framework: str) -> None:
    (run,) = fixture_runs(TRACES / framework / "tool_then_answer.json")
    source, text = INSTRUCTIONS[framework]
    assert run.context[0] == ContextItem(text, "system_instructions", source)
    assert [item.kind for item in run.context] == ["system_instructions", "tool_result"]


@pytest.mark.parametrize("framework", ["openai-v2", "pydantic-ai-v6", "langgraph-openinference", "vercel-ai"])
def test_a_trace_without_content_gives_no_context(framework: str) -> None:
    for run in fixture_runs(TRACES / framework / "no_content.json"):
        assert [item for item in run.context if item.kind != "system_instructions"] == []


def test_openinference_retriever_documents_join_the_run_in_order_with_their_ids(telemetry: Telemetry) -> None:
    recorder = RunRecorder()
    processor = ScoringSpanProcessor([recorder], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    tracer = telemetry.tracer_provider.get_tracer("openinference.instrumentation.llama_index")
    with tracer.start_as_current_span("agent", attributes={KIND: "AGENT", "agent.name": "support"}):
        with tracer.start_as_current_span("retrieve", attributes={KIND: "RETRIEVER"}) as retriever:
            retriever.set_attributes(
                {
                    "input.value": "refund window",
                    "retrieval.documents.1.document.content": "Refunds take 5 business days.",
                    "retrieval.documents.0.document.id": "policy-12",
                    "retrieval.documents.0.document.content": "Returns are accepted within 30 days.",
                    "retrieval.documents.1.document.score": 0.4,
                }
            )
        with tracer.start_as_current_span("llm", attributes={KIND: "LLM"}) as model:
            model.set_attributes(
                {
                    "llm.input_messages.0.message.role": "user",
                    "llm.input_messages.0.message.content": "How long do I have to return it?",
                    "llm.output_messages.0.message.role": "assistant",
                    "llm.output_messages.0.message.content": "30 days.",
                }
            )
    assert processor.force_flush(5000)
    processor.shutdown()
    (run,) = recorder.runs
    assert run.context == (
        ContextItem("Returns are accepted within 30 days.", "document", "policy-12", run.context[0].span_id),
        ContextItem("Refunds take 5 business days.", "document", "retrieve[1]", run.context[0].span_id),
    )
    assert run.context[0].span_id is not None and run.context[0].span_id != run.span_id


def test_genai_retrieval_spans_give_their_documents_with_content(telemetry: Telemetry) -> None:
    recorder = RunRecorder()
    processor = ScoringSpanProcessor([recorder], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    tracer = telemetry.tracer_provider.get_tracer("my.agent")
    documents = [
        {"id": "doc_123", "score": 0.95, "content": "Paris is the capital of France."},
        {"id": "doc_456", "score": 0.87},  # recorded without its content: nothing to ground on
    ]
    run_attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "geo"}
    retrieval = {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": json.dumps(documents)}
    with tracer.start_as_current_span("invoke_agent geo", attributes=run_attributes):
        tracer.start_span("retrieval", attributes=retrieval).end()
    assert processor.force_flush(5000)
    processor.shutdown()
    (run,) = recorder.runs
    assert [(item.text, item.kind, item.source) for item in run.context] == [
        ("Paris is the capital of France.", "document", "doc_123")
    ]


def context_seen(binding_context: Any, run: AgentRun) -> tuple[ContextItem, ...]:
    recorder = RunRecorder()
    binding = bind(recorder, context=binding_context)
    evaluate(binding, run)
    (seen,) = recorder.runs
    return seen.context


RUN = AgentRun(
    trace_id=1,
    span_id=2,
    agent_name="a",
    input="q",
    output="o",
    attributes={"app.docs": json.dumps(["first doc", "second doc"]), "app.one": "only doc", "app.n": 3},
    context=(ContextItem("from the trace", "tool_result", "search"),),
)


def test_a_binding_can_give_a_static_context_instead_of_the_traces() -> None:
    assert context_seen(["Policy: 30 days."], RUN) == (ContextItem("Policy: 30 days.", "given", "config"),)


def test_a_binding_can_read_the_context_from_a_path_into_the_run() -> None:
    assert context_seen("attributes.app.docs", RUN) == (
        ContextItem("first doc", "given", "attributes.app.docs"),
        ContextItem("second doc", "given", "attributes.app.docs"),
    )
    assert context_seen("attributes.app.one", RUN) == (
        ContextItem("only doc", "given", "attributes.app.one"),
    )


def test_a_path_that_holds_no_texts_leaves_the_runs_own_context() -> None:
    assert context_seen("attributes.app.n", RUN) == RUN.context
    assert context_seen("attributes.absent", RUN) == RUN.context


def test_a_bad_context_in_the_config_names_its_key(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("scorers:\n  - type: includes\n    args: {expected: x}\n    context: nowhere.near\n")
    with pytest.raises(ConfigError) as raised:
        load_config(config)
    assert "scorers[0].context" in str(raised.value) and "nowhere.near" in str(raised.value)
    config.write_text("scorers:\n  - type: includes\n    args: {expected: x}\n    context: [a doc]\n")
    (binding,) = load_config(config).scoring().bindings
    assert binding.context is not None and binding.context(RUN) == (ContextItem("a doc", "given", "config"),)
