"""OpenLLMetry / Traceloop: decorator spans, GenAI and legacy indexed LLM messages, and its
LangGraph layout (content on the workflow span, wrapped tool arguments and results, sub-agent
task spans, `create_agent` traces that are not runs), and Agno's tool results written as the
repr of its `ToolResult`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from otel_scorers import bind, checks
from otel_scorers.conventions import may_start_run
from otel_scorers.conventions.openllmetry_text import indexed_messages
from otel_scorers.model import Score
from otel_scorers.pipeline.scorer_call import evaluate
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanRecord
from tests.spans import only_run, span

LANGCHAIN = "opentelemetry.instrumentation.langchain"


def traceloop(name: str, parent: SpanRecord | None, kind: str, **attributes: Any) -> SpanRecord:
    return span(name, parent, scope=LANGCHAIN, **{"traceloop.span.kind": kind, **attributes})


def lc(kind: str, **kwargs: Any) -> dict[str, Any]:
    """A LangChain message as `dumpd` serialises it."""
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", kind], "kwargs": kwargs}


def chat(parent: SpanRecord, inputs: list[dict[str, Any]], outputs: list[dict[str, Any]]) -> SpanRecord:
    return span(
        "FakeModel.chat",
        parent,
        scope=LANGCHAIN,
        **{
            "traceloop.workflow.name": "weather_agent",
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "unknown",
            "gen_ai.input.messages": json.dumps(inputs),
            "gen_ai.output.messages": json.dumps(outputs),
            "gen_ai.usage.input_tokens": 40,
            "gen_ai.usage.output_tokens": 12,
        },
    )


def tool_span(parent: SpanRecord, arguments: dict[str, Any], result: Any, **attributes: Any) -> SpanRecord:
    return traceloop(
        "execute_tool get_weather",
        parent,
        "tool",
        **{
            "traceloop.entity.name": "get_weather",
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.arguments": json.dumps(arguments),
            **({"gen_ai.tool.call.result": json.dumps(result)} if result is not None else {}),
            **attributes,
        },
    )


def langgraph_trace(arguments: dict[str, Any]) -> list[SpanRecord]:
    root = span(
        "invoke_agent weather_agent",
        scope=LANGCHAIN,
        **{
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "weather_agent",
            "gen_ai.workflow.nodes": ["model", "tools"],
        },
    )
    workflow = traceloop(
        "weather_agent.workflow",
        root,
        "workflow",
        **{
            "traceloop.entity.name": "weather_agent",
            "gen_ai.operation.name": "invoke_agent",
            "traceloop.entity.input": json.dumps(
                {"inputs": {"messages": [{"role": "user", "content": "Weather in Paris?"}]}, "tags": []}
            ),
            "traceloop.entity.output": json.dumps(
                {
                    "outputs": {
                        "messages": [
                            lc("HumanMessage", content="Weather in Paris?"),
                            lc("AIMessage", content="Sunny."),
                        ]
                    }
                }
            ),
        },
    )
    node = traceloop("execute_task model", workflow, "task", **{"traceloop.entity.name": "model"})
    ask = chat(
        node,
        [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}],
        [
            {
                "role": "assistant",
                "parts": [
                    {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}
                ],
            }
        ],
    )
    tools = traceloop("execute_task tools", workflow, "task", **{"traceloop.entity.name": "tools"})
    message = lc("ToolMessage", content="Sunny, 21°C", tool_call_id="c1", status="success")
    tool = tool_span(tools, arguments, {"output": message, "kwargs": {"name": "get_weather"}})
    return [root, workflow, node, ask, tools, tool]


def test_langgraph_the_workflow_span_is_the_run_and_the_tool_wrappers_unwrap() -> None:
    wrapper = {
        "input_str": "{'city': 'Paris'}",
        "inputs": {"city": "Paris"},
        "kwargs": {"tool_call_id": "c1"},
    }
    run = only_run(langgraph_trace(wrapper))
    assert (run.convention, run.agent_name, run.input, run.output) == (
        "openllmetry",
        "weather_agent",
        "Weather in Paris?",
        "Sunny.",
    )
    (call,) = run.tool_calls
    assert (call.name, call.call_id, call.arguments, call.result, call.state) == (
        "get_weather",
        "c1",
        {"city": "Paris"},
        "Sunny, 21°C",
        "ok",
    )
    assert run.models == () and run.usage.input_tokens == 40  # the fake model's "unknown" is no model name


def test_langgraph_input_str_alone_is_read_as_a_python_literal() -> None:
    run = only_run(langgraph_trace({"input_str": "{'city': 'Paris', 'days': 2}", "tags": []}))
    assert run.tool_calls[0].arguments == {"city": "Paris", "days": 2}


def test_task_status_failure_is_a_failed_call_without_result() -> None:
    spans = langgraph_trace({"inputs": {"city": "Paris"}})
    spans[-1] = tool_span(
        spans[4],
        {"inputs": {"city": "Paris"}},
        None,
        **{"gen_ai.task.status": "failure", "error.type": "RuntimeError"},
    )
    (call,) = only_run(spans).tool_calls
    assert (call.state, call.result, call.error) == ("error", None, "RuntimeError")


def test_create_agent_traces_are_not_runs() -> None:
    created = span(
        "create_agent weather_agent",
        scope=LANGCHAIN,
        **{"gen_ai.operation.name": "create_agent", "gen_ai.agent.name": "weather_agent"},
    )
    assert build_runs([created]) == []


def test_a_sub_agent_task_named_after_its_agent_is_a_run_of_its_own() -> None:
    spans = langgraph_trace({"inputs": {"city": "Paris"}})
    tool = spans[-1]
    inner = traceloop(
        "execute_task weather_expert",
        tool,
        "task",
        **{
            "traceloop.entity.name": "weather_expert",
            "traceloop.association.properties.lc_agent_name": "weather_expert",
            "traceloop.entity.input": json.dumps(
                {"inputs": {"messages": [{"role": "user", "content": "Paris?"}]}}
            ),
        },
    )
    outer, expert = build_runs([*spans, inner])
    assert (outer.agent_name, expert.agent_name, expert.input) == (
        "weather_agent",
        "weather_expert",
        "Paris?",
    )
    assert len(outer.tool_calls) == 1 and expert.tool_calls == ()


def test_legacy_indexed_prompt_and_completion_keys() -> None:
    attributes = {
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "Weather in Paris?",
        "gen_ai.prompt.1.role": "assistant",
        "gen_ai.prompt.1.tool_calls.0.id": "c1",
        "gen_ai.prompt.1.tool_calls.0.name": "get_weather",
        "gen_ai.prompt.1.tool_calls.0.arguments": '{"city": "Paris"}',
        "gen_ai.prompt.2.role": "tool",
        "gen_ai.prompt.2.content": "Sunny",
        "gen_ai.prompt.2.tool_call_id": "c1",
        "gen_ai.prompt.10.role": "user",
        "gen_ai.prompt.10.content": '[{"type": "text", "text": "And "}, {"type": "text", "text": "Lyon?"}]',
    }
    parsed = indexed_messages(attributes, "gen_ai.prompt.")
    user, assistant, tool, later = parsed.items
    assert user == {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}
    assert assistant["parts"] == [
        {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": '{"city": "Paris"}'}
    ]
    assert tool["parts"] == [{"type": "tool_call_response", "id": "c1", "response": "Sunny"}]
    assert later["parts"] == [{"type": "text", "content": "And Lyon?"}]  # index 10 sorts after 2


def test_decorated_workflow_with_a_legacy_llm_span_and_a_decorated_tool() -> None:
    workflow = traceloop(
        "trip.workflow",
        None,
        "workflow",
        **{
            "traceloop.entity.name": "trip",
            "traceloop.entity.input": json.dumps({"args": ["Weather in Paris?"], "kwargs": {}}),
            "traceloop.entity.output": json.dumps("Sunny."),
        },
    )
    model = span(
        "openai.chat",
        workflow,
        scope="opentelemetry.instrumentation.openai",
        **{
            "llm.request.type": "chat",
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": "Weather in Paris?",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.tool_calls.0.id": "c1",
            "gen_ai.completion.0.tool_calls.0.name": "get_weather",
            "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Paris"}',
            "gen_ai.usage.prompt_tokens": 9,
            "gen_ai.usage.completion_tokens": 3,
            "gen_ai.response.model": "gpt-4o-mini",
        },
    )
    tool = traceloop(
        "get_weather.tool",
        workflow,
        "tool",
        **{
            "traceloop.entity.name": "get_weather",
            "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"city": "Paris"}}),
            "traceloop.entity.output": json.dumps("Sunny"),
        },
    )
    run = only_run([workflow, model, tool])
    assert (run.agent_name, run.input, run.output, run.models) == (
        "trip",
        "Weather in Paris?",
        "Sunny.",
        ("gpt-4o-mini",),
    )
    assert (run.usage.input_tokens, run.usage.output_tokens) == (9, 3)
    (call,) = run.tool_calls
    assert (call.name, call.call_id, call.arguments, call.result) == (
        "get_weather",
        "c1",
        {"city": "Paris"},
        "Sunny",
    )


def test_workflow_and_agent_spans_are_spotted_by_their_kind() -> None:
    assert may_start_run("trip.workflow", {"traceloop.span.kind": "workflow"})
    assert may_start_run("planner.agent", {"traceloop.span.kind": "agent"})
    assert not may_start_run("get_weather.tool", {"traceloop.span.kind": "tool"})


AGNO = "opentelemetry.instrumentation.agno"
AFTER_ERROR = "updated_session_state=None images=None videos=None audios=None files=None"


def agno_tool(parent: SpanRecord, output: str | None, **attributes: Any) -> SpanRecord:
    content = (
        {}
        if output is None
        else {"traceloop.entity.input": '{"city": "Paris"}', "traceloop.entity.output": output}
    )
    return span(
        "get_weather.tool",
        parent,
        scope=AGNO,
        status="ok",
        **{"traceloop.span.kind": "tool", "gen_ai.tool.name": "get_weather", **content, **attributes},
    )


def agno_calls(*outputs: str | None) -> list[Any]:
    run = span(
        "weather_agent.agent",
        scope=AGNO,
        **{"traceloop.span.kind": "agent", "gen_ai.agent.name": "weather_agent"},
    )
    tools = [agno_tool(run, output) for output in outputs]
    return list(only_run([run, *tools]).tool_calls)


@pytest.mark.parametrize(
    ("result_repr", "result"),
    [
        ("'Sunny, 72F'", "Sunny, 72F"),
        ("{'temp_c': 21, 'sunny': True, 'wind': None}", {"temp_c": 21, "sunny": True, "wind": None}),
        ("'it said error=None here'", "it said error=None here"),  # the field separator inside the result
        ("'" + " error=1" * 500 + "'", " error=1" * 500),  # only the first and last few places are tried
        ("Report(city='Paris')", "Report(city='Paris')"),  # no literal: the repr's text
        ("<generator object delegate.<locals>.run at 0x7f3a2c>", None),  # no value at all
    ],
)
def test_agno_tool_results_are_read_from_the_tool_result_repr(result_repr: str, result: Any) -> None:
    (call,) = agno_calls(f"status='success' result={result_repr} error=None {AFTER_ERROR}")
    assert (call.result, call.state, call.arguments) == (result, "ok", {"city": "Paris"})


def test_agno_a_failure_is_the_tool_results_status_as_the_span_ends_ok() -> None:
    (call,) = agno_calls(f"status='failure' result=None error='weather service unavailable' {AFTER_ERROR}")
    assert (call.state, call.error, call.result) == ("error", "weather service unavailable", None)


def test_agno_output_that_is_no_tool_result_is_read_as_any_output() -> None:
    (call,) = agno_calls("status='success' result=")  # cut short
    assert (call.state, call.result) == ("ok", "status='success' result=")


def test_agno_without_content_whether_a_tool_failed_is_missing_and_no_tool_errors_is_skipped() -> None:
    run = span(
        "weather_agent.agent",
        scope=AGNO,
        **{"traceloop.span.kind": "agent", "gen_ai.agent.name": "weather_agent"},
    )
    (built,) = build_runs([run, agno_tool(run, None)])
    assert "tool_errors" in built.missing and built.tool_calls[0].state == "ok"
    score = evaluate(bind(checks.no_tool_errors()), built)
    assert isinstance(score, Score) and score.value is None and score.skipped is not None
    with_content = only_run(
        [run, agno_tool(run, f"status='success' result='Sunny' error=None {AFTER_ERROR}")]
    )
    assert "tool_errors" not in with_content.missing
