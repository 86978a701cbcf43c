"""Mastra's OpenTelemetry exporter: 1.x (GenAI spans plus `mastra.agent_run.*`) and 0.3.x
(`agent.{id}`, `tool.execute {id}`, generic `input`/`output`, `gen_ai.tool.success`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from otel_scorers.conventions import may_start_run
from otel_scorers.runs.otlp_files import InputProblem, runs_from_files
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanRecord
from tests.spans import only_run, span

V1 = "@mastra/otel-exporter"
V03 = "@mastra/otel"
TRACES = Path(__file__).parent.parent / "fixtures" / "traces"


def mastra(
    name: str, parent: SpanRecord | None, span_type: str, scope: str = V1, **attributes: Any
) -> SpanRecord:
    return span(name, parent, scope=scope, **{"mastra.span.type": span_type, **attributes})


def test_mastra_1_run_reads_its_own_input_and_output_over_genai_spans() -> None:
    run_span = mastra(
        "invoke_agent Weather Agent",
        None,
        "agent_run",
        **{
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.id": "weatherAgent",
            "gen_ai.agent.name": "Weather Agent",
            "gen_ai.conversation.id": "thread-1",
            "mastra.agent_run.input": json.dumps([{"role": "user", "content": "Weather in Paris?"}]),
            "mastra.agent_run.output": json.dumps({"text": "It is sunny.", "files": []}),
        },
    )
    ask = mastra(
        "chat gpt-4o-mini",
        run_span,
        "model_generation",
        **{
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "weatherTool"}]}]
            ),
            "gen_ai.usage.input_tokens": 30,
            "gen_ai.usage.output_tokens": 5,
        },
    )
    call = mastra(
        "execute_tool weatherTool",
        ask,
        "tool_call",
        **{
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "weatherTool",
            "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.call.arguments": json.dumps({"city": "Paris"}),
            "gen_ai.tool.call.result": json.dumps({"conditions": "Sunny", "temperature": 21}),
        },
    )
    run = only_run([run_span, ask, call])
    assert (run.convention, run.agent_name, run.input, run.output, run.conversation_id) == (
        "mastra",
        "Weather Agent",
        "Weather in Paris?",
        "It is sunny.",
        "thread-1",
    )
    (made,) = run.tool_calls
    assert (made.name, made.call_id, made.arguments, made.result, made.state) == (
        "weatherTool",
        "c1",
        {"city": "Paris"},
        {"conditions": "Sunny", "temperature": 21},
        "ok",
    )
    assert run.models == ("gpt-4o-mini",) and run.usage.input_tokens == 30


def test_mastra_1_tool_error_attributes_make_a_failed_call() -> None:
    run_span = mastra("invoke_agent a", None, "agent_run", **{"mastra.agent_run.input": "Weather?"})
    failed = mastra(
        "execute_tool weatherTool",
        run_span,
        "tool_call",
        **{"gen_ai.tool.name": "weatherTool", "error.type": "TOOL_EXECUTION_FAILED", "error.message": "down"},
    )
    run = only_run([run_span, failed])
    assert run.input == "Weather?" and run.agent_name == "a"
    (call,) = run.tool_calls
    assert (call.state, call.result, call.error) == ("error", None, "down")


def test_mastra_0_3_spans_read_generic_input_output_and_tool_success() -> None:
    run_span = mastra(
        "agent.weatherAgent",
        None,
        "agent_run",
        V03,
        **{
            "gen_ai.operation.name": "agent.run",
            "agent.id": "weatherAgent",
            "input": json.dumps(["Weather in Paris?"]),
            "output": json.dumps({"text": "Sunny in Paris."}),
        },
    )
    ask = mastra(
        "chat gpt-4o-mini",
        run_span,
        "model_generation",
        V03,
        **{
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.prompt": json.dumps({"messages": [{"role": "user", "content": "Weather in Paris?"}]}),
            "gen_ai.completion": json.dumps(
                {
                    "text": "",
                    "toolCalls": [
                        {"toolCallId": "c1", "toolName": "weatherTool", "args": {"city": "Paris"}},
                        {"toolCallId": "c2", "toolName": "timeTool", "args": {"city": "Paris"}},
                    ],
                }
            ),
        },
    )
    tool = mastra(
        "tool.execute weatherTool",
        run_span,
        "tool_call",
        V03,
        **{
            "gen_ai.operation.name": "tool.execute",
            "gen_ai.tool.name": "weatherTool",
            "gen_ai.tool.input": json.dumps({"city": "Paris"}),
            "gen_ai.tool.output": json.dumps("Sunny"),
            "gen_ai.tool.success": True,
        },
    )
    failing = mastra(
        "tool.execute timeTool",
        run_span,
        "tool_call",
        V03,
        **{"gen_ai.tool.name": "timeTool", "gen_ai.tool.input": "{}", "gen_ai.tool.success": False},
    )
    run = only_run([run_span, ask, tool, failing])
    assert (run.agent_name, run.input, run.output) == ("weatherAgent", "Weather in Paris?", "Sunny in Paris.")
    assert [(c.name, c.call_id, c.arguments, c.result, c.state) for c in run.tool_calls] == [
        ("weatherTool", "c1", {"city": "Paris"}, "Sunny", "ok"),
        ("timeTool", "c2", {}, None, "error"),
    ]


def test_mastra_wins_over_genai_and_spans_of_other_types_play_no_part() -> None:
    run_span = mastra("invoke_agent a", None, "agent_run", **{"gen_ai.operation.name": "invoke_agent"})
    step = mastra("step: 0", run_span, "model_step", **{"mastra.model_step.output": "{}"})
    workflow = mastra(
        "invoke_workflow w", None, "workflow_run", **{"gen_ai.operation.name": "invoke_workflow"}
    )
    (run,) = build_runs([run_span, step, workflow])
    assert run.convention == "mastra" and run.tool_calls == ()
    assert {"input", "output"} <= run.missing


def test_a_mastra_run_span_is_spotted_by_its_type() -> None:
    assert may_start_run("invoke_agent a", {"mastra.span.type": "agent_run"})
    assert may_start_run("agent.weatherAgent", {"mastra.span.type": "agent_run"})
    assert not may_start_run("tool.execute t", {"mastra.span.type": "tool_call"})


def test_a_bridged_mastra_span_is_spotted_by_its_scope_when_it_starts() -> None:
    # OtelBridge starts each span under Mastra's own name with no attributes yet; a run's name is
    # `agent run: '{id}'` unless `tracingOptions.rootSpanName` replaces it.
    assert may_start_run("agent run: 'weather-agent'", {}, "@mastra/otel-bridge")
    assert may_start_run("weather request", {}, "@mastra/otel-bridge")
    assert not may_start_run("weather request", {}, "@mastra/otel-exporter")


@pytest.mark.parametrize("corpus", ["mastra-exporter", "mastra-bridge"])
def test_real_mastra_runs_count_each_model_call_once(corpus: str) -> None:
    # The generator's scripted model reports 42 input and 12 output tokens per call; the run
    # called it twice (the tool call, then the answer). The exporter writes the usage on each
    # call's span, the bridge the sum on the loop's span: either way it is counted once.
    trace = TRACES / corpus / "tool_then_answer.json"
    problems: list[InputProblem] = []
    (run,) = runs_from_files([trace], problems)
    assert not problems
    assert run.models == ("mock-model",)
    assert (run.usage.input_tokens, run.usage.output_tokens) == (2 * 42, 2 * 12)


def test_mastra_tool_calls_through_arize_are_read_from_openinference_values() -> None:
    # @mastra/arize writes a tool's arguments and result only as OpenInference's `input.value` /
    # `output.value`, beside `mastra.span.type`: the truth's calls, results included.
    truth = json.loads((TRACES / "mastra-arize" / "two_tools.truth.json").read_text())
    problems: list[InputProblem] = []
    (run,) = runs_from_files([TRACES / "mastra-arize" / "two_tools.json"], problems)
    assert not problems
    assert [(call.name, call.arguments, call.result) for call in run.tool_calls] == [
        (call["name"], call["arguments"], call["result"]) for call in truth["runs"][0]["tool_calls"]
    ]
