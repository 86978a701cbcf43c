"""CrewAI under OpenInference and OpenLLMetry: a run is an agent's work on one task, its input
the task description (read from CrewAI's prompt when the run span does not carry it), and a
tool CrewAI reported to the model as failed is a failed call. The real layouts are the
crewai-* fixtures; these cases cover what the fixtures do not: failed tasks and prompts with
more after the task."""

from __future__ import annotations

import json
from typing import Any

from otel_scorers import bind, checks
from otel_scorers.conventions.formats.crewai import task_in_prompt, tool_error
from otel_scorers.pipeline.scorer_call import evaluate
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanRecord
from tests.spans import span

OPENINFERENCE = "openinference.instrumentation.crewai"
OPENLLMETRY = "opentelemetry.instrumentation.crewai.instrumentation"
PROMPT = (
    "\nCurrent Task: What is the weather in Paris?\n\nThis is the expected criteria for your final "
    "answer: One sentence.\nyou MUST return the actual complete content as the final answer, not a "
    "summary.\n\nThis is the context you're working with:\nSunny.\n\nProvide your complete response:"
)


def test_the_task_is_the_text_between_current_task_and_what_crewai_writes_after_it() -> None:
    assert task_in_prompt(PROMPT) == "What is the weather in Paris?"
    assert task_in_prompt("\nCurrent Task: Line one.\n\nLine two.") == "Line one.\n\nLine two."
    assert task_in_prompt("\nCurrent Task: Say hi.\n\nBegin! This is VERY important to you, ...") == "Say hi."
    assert task_in_prompt("What is the weather in Paris?") is None


def test_only_crewais_failure_text_is_a_tool_error() -> None:
    assert tool_error("Error executing tool: weather service unavailable") == "weather service unavailable"
    assert tool_error("Sunny, 21°C") is None
    assert tool_error({"error": "x"}) is None


def openinference_task(**attributes: Any) -> list[SpanRecord]:
    task = span(
        "Weather Reporter._execute_core",
        None,
        scope=OPENINFERENCE,
        **{"openinference.span.kind": "AGENT", "graph.node.id": "Weather Reporter", **attributes},
    )
    model = span(
        "ChatCompletion",
        task,
        scope="openinference.instrumentation.openai",
        **{
            "openinference.span.kind": "LLM",
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": PROMPT,
        },
    )
    return [task, model]


def test_a_failed_openinference_task_without_its_task_output_takes_the_task_from_the_prompt() -> None:
    agent = {"agent": {"role": "Weather Reporter"}, "context": "", "tools": []}
    (run,) = build_runs(openinference_task(**{"input.value": json.dumps(agent)}))
    assert (run.agent_name, run.input, run.output) == (
        "Weather Reporter",
        "What is the weather in Paris?",
        None,
    )


def test_an_openinference_task_output_gives_the_description_and_the_answer() -> None:
    output = {"description": "What is the weather in Paris?", "raw": "Sunny.", "agent": "Weather Reporter"}
    (run,) = build_runs(openinference_task(**{"output.value": json.dumps(output)}))
    assert (run.input, run.output) == ("What is the weather in Paris?", "Sunny.")


def test_an_agent_kicked_off_with_messages_gets_the_last_user_message() -> None:
    kickoff = {"messages": [{"role": "user", "content": "Hi"}, {"role": "user", "content": "Weather?"}]}
    run_span = span(
        "Weather Reporter.kickoff",
        None,
        scope=OPENINFERENCE,
        **{
            "openinference.span.kind": "AGENT",
            "graph.node.id": "Weather Reporter",
            "input.value": json.dumps(kickoff),
        },
    )
    (run,) = build_runs([run_span])
    assert (run.agent_name, run.input) == ("Weather Reporter", "Weather?")


def chat(parent: SpanRecord, inputs: list[Any], outputs: list[Any]) -> SpanRecord:
    return span(
        "openai.chat",
        parent,
        scope="opentelemetry.instrumentation.openai.v1",
        **{
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(inputs),
            "gen_ai.output.messages": json.dumps(outputs),
        },
    )


def test_openllmetry_a_crew_is_not_a_run_and_its_tool_calls_come_from_what_the_model_was_sent() -> None:
    crew = span(
        "crewai.workflow",
        None,
        scope=OPENLLMETRY,
        **{"gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "crewai"},
    )
    task = span(
        "What is the weather in Paris?.task", crew, scope=OPENLLMETRY, **{"traceloop.span.kind": "task"}
    )
    agent = span(
        "Weather Reporter.agent",
        task,
        scope=OPENLLMETRY,
        **{"traceloop.span.kind": "agent", "gen_ai.agent.name": "Weather Reporter"},
    )
    user = {"role": "user", "parts": [{"type": "text", "content": PROMPT}]}
    calls = {
        "role": "assistant",
        "parts": [
            {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}},
            {"type": "tool_call", "id": "c2", "name": "get_time", "arguments": {"city": "Paris"}},
        ],
    }
    sent = {
        "role": "tool",
        "parts": [
            {"type": "tool_call_response", "id": "c1", "response": "Error executing tool: service down"},
            {"type": "tool_call_response", "id": "c2", "response": "14:05"},
        ],
    }
    answer = {"role": "assistant", "parts": [{"type": "text", "content": "It is 14:05."}]}
    spans = [crew, task, agent, chat(agent, [user], [calls]), chat(agent, [user, calls, sent], [answer])]
    (run,) = build_runs(spans)
    assert (run.agent_name, run.input, run.output) == (
        "Weather Reporter",
        "What is the weather in Paris?",
        "It is 14:05.",
    )
    assert [(c.name, c.state, c.result, c.error) for c in run.tool_calls] == [
        ("get_weather", "error", None, "service down"),
        ("get_time", "ok", "14:05", None),
    ]


def test_openllmetry_without_content_the_calls_are_unknown_and_the_tool_checks_skip() -> None:
    task = span(
        "What is the weather in Paris?.task", None, scope=OPENLLMETRY, **{"traceloop.span.kind": "task"}
    )
    agent = span("Weather Reporter.agent", task, scope=OPENLLMETRY, **{"traceloop.span.kind": "agent"})
    model = span(
        "openai.chat", agent, scope="opentelemetry.instrumentation.openai.v1", gen_ai__operation__name="chat"
    )
    (run,) = build_runs([task, agent, model])
    assert {"tool_calls", "tool_errors"} <= run.missing and run.tool_calls == ()
    for check in (checks.used_no_tools(), checks.called_tool("get_weather"), checks.no_tool_errors()):
        score = evaluate(bind(check), run)
        assert score is not None and score.value is None and score.skipped is not None
