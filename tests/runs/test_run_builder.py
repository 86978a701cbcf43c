"""Building runs from GenAI-convention spans: the rules in docs/conventions.md and docs/checks.md."""

from __future__ import annotations

import json
from typing import Any

import pytest

from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import OWN_SCOPE, SpanEvent, SpanRecord
from tests.spans import only_run, span


def messages(*items: tuple[str, list[dict[str, Any]]]) -> str:
    return json.dumps([{"role": role, "parts": parts} for role, parts in items])


def text(content: str) -> dict[str, Any]:
    return {"type": "text", "content": content}


def call(name: str, arguments: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "tool_call", "name": name, "arguments": arguments}
    if call_id:
        part["id"] = call_id
    return part


def run_span(name: str = "weather", **attributes: Any) -> SpanRecord:
    return span(
        f"invoke_agent {name}", gen_ai__operation__name="invoke_agent", gen_ai__agent__name=name, **attributes
    )


def chat(
    parent: SpanRecord, input_messages: str | None = None, output_messages: str | None = None, **extra: Any
) -> SpanRecord:
    attributes: dict[str, Any] = {"gen_ai__operation__name": "chat", **extra}
    if input_messages is not None:
        attributes["gen_ai__input__messages"] = input_messages
    if output_messages is not None:
        attributes["gen_ai__output__messages"] = output_messages
    return span("chat model-x", parent, **attributes)


def tool(parent: SpanRecord, name: str, **attributes: Any) -> SpanRecord:
    return span(
        f"execute_tool {name}",
        parent,
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name=name,
        **attributes,
    )


def test_input_and_output_from_the_run_span() -> None:
    root = run_span(
        gen_ai__input__messages=messages(
            ("system", [text("be nice")]),
            ("user", [text("old")]),
            ("assistant", [text("a")]),
            ("user", [text("Weather?")]),
        ),
        gen_ai__output__messages=messages(("assistant", [text("Sunny")])),
        gen_ai__conversation__id="c-1",
    )
    run = only_run([root])
    assert (run.input, run.output, run.agent_name, run.conversation_id) == (
        "Weather?",
        "Sunny",
        "weather",
        "c-1",
    )
    assert run.missing == frozenset()
    assert run.convention == "genai"


def test_input_and_output_fall_back_to_the_first_and_last_model_spans() -> None:
    root = run_span()
    first = chat(
        root,
        messages(("user", [text("Weather in Paris?")])),
        messages(("assistant", [call("get_weather", {"city": "Paris"}, "c1")])),
    )
    used = tool(root, "get_weather", gen_ai__tool__call__id="c1", gen_ai__tool__call__result="Sunny")
    last = chat(
        root, messages(("user", [text("Weather in Paris?")])), messages(("assistant", [text("It is sunny.")]))
    )
    run = only_run([root, first, used, last])
    assert run.input == "Weather in Paris?"
    assert run.output == "It is sunny."
    assert run.tool_calls[0].arguments == {"city": "Paris"}  # from the part the tool span's id matched
    assert run.tool_calls[0].result == "Sunny"


def test_arguments_are_taken_from_the_matching_tool_call_part() -> None:
    root = run_span()
    ask = chat(
        root,
        messages(("user", [text("q")])),
        messages(("assistant", [call("get_weather", {"city": "Oslo"})])),
    )
    used = tool(root, "get_weather")
    run = only_run([root, ask, used])
    assert run.tool_calls[0].arguments == {"city": "Oslo"}
    assert run.tool_calls[0].state == "ok"


def test_content_not_captured_is_missing_not_empty() -> None:
    root = run_span()
    run = only_run([root, chat(root), tool(root, "get_weather")])
    assert run.input is None and run.output is None
    assert {"input", "output"} <= run.missing
    assert run.tool_names == ["get_weather"]


def test_captured_content_without_a_final_text_is_an_empty_answer() -> None:
    root = run_span()
    ask = chat(
        root, messages(("user", [text("q")])), messages(("assistant", [call("get_weather", {}, "c1")]))
    )
    run = only_run([root, ask, tool(root, "get_weather", gen_ai__tool__call__id="c1")])
    assert run.output == ""
    assert "output" not in run.missing


def test_tool_states() -> None:
    root = run_span()
    spans = [
        root,
        tool(root, "ok_tool", gen_ai__tool__call__result=json.dumps({"temp": 21})),
        tool(root, "status_error", status="error"),
        tool(root, "error_type", error__type="TimeoutError"),
        tool(
            root,
            "exception_event",
            events=(
                SpanEvent("exception", 1, {"exception.type": "ValueError", "exception.message": "bad city"}),
            ),
        ),
        tool(root, "result_error", gen_ai__tool__call__result=json.dumps({"error": "no station"})),
        tool(root, "result_error_empty", gen_ai__tool__call__result=json.dumps({"error": None, "ok": 1})),
        tool(root, "never_finished", ended=False),
    ]
    run = only_run(spans)
    states = {call.name: call.state for call in run.tool_calls}
    assert states == {
        "ok_tool": "ok",
        "status_error": "error",
        "error_type": "error",
        "exception_event": "error",
        "result_error": "result_error",
        "result_error_empty": "ok",
        "never_finished": "incomplete",
    }
    by_name = {call.name: call for call in run.tool_calls}
    assert by_name["ok_tool"].result == {"temp": 21}
    assert by_name["exception_event"].error == "ValueError: bad city"
    assert run.tool_names == [s.name.removeprefix("execute_tool ") for s in spans[1:]], "start order"


@pytest.mark.parametrize(
    ("error", "state"),
    [
        ({}, "result_error"),  # any object or array is true in JavaScript, even empty
        ([], "result_error"),
        ({"code": 3}, "result_error"),
        (" ", "result_error"),  # a non-empty string, even blank
        ("no station", "result_error"),
        (-1, "result_error"),
        (0.5, "result_error"),
        (True, "result_error"),
        (None, "ok"),
        (False, "ok"),
        (0, "ok"),
        (0.0, "ok"),
        ("", "ok"),
    ],
)
def test_a_result_error_is_read_with_javascript_truthiness(error: object, state: str) -> None:
    root = run_span()
    result = json.dumps({"error": error, "data": 1})
    run = only_run([root, tool(root, "lookup", gen_ai__tool__call__result=result)])
    assert run.tool_calls[0].state == state


def test_a_result_errors_text_is_the_error_as_json_unless_it_is_a_string() -> None:
    root = run_span()
    spans = [
        root,
        tool(root, "a", gen_ai__tool__call__result=json.dumps({"error": {"code": 3}})),
        tool(root, "b", gen_ai__tool__call__result=json.dumps({"error": "no station"})),
    ]
    assert [call.error for call in only_run(spans).tool_calls] == ['{"code":3}', "no station"]


def test_a_requested_call_no_tool_span_answers_is_incomplete() -> None:
    root = run_span()
    ask = chat(
        root,
        messages(("user", [text("q")])),
        messages(
            (
                "assistant",
                [call("get_weather", {"city": "Paris"}, "c1"), call("get_time", {"city": "Paris"}, "c2")],
            )
        ),
    )
    answered = tool(root, "get_weather", gen_ai__tool__call__id="c1")
    run = only_run([root, ask, answered])
    assert sorted((c.name, c.state, c.call_id) for c in run.tool_calls) == [
        ("get_time", "incomplete", "c2"),
        ("get_weather", "ok", "c1"),
    ]
    incomplete = next(c for c in run.tool_calls if c.state == "incomplete")
    assert incomplete.arguments == {"city": "Paris"}


def test_tool_spans_without_ids_match_parts_by_order_and_name() -> None:
    root = run_span()
    ask = chat(
        root,
        messages(("user", [text("q")])),
        messages(("assistant", [call("lookup", {"q": "first"}, "a"), call("lookup", {"q": "second"}, "b")])),
    )
    run = only_run([root, ask, tool(root, "lookup"), tool(root, "lookup")])
    assert [c.arguments for c in run.tool_calls] == [{"q": "first"}, {"q": "second"}]
    assert [c.call_id for c in run.tool_calls] == ["a", "b"]
    assert all(c.state == "ok" for c in run.tool_calls)


def test_nested_agents_each_tool_call_belongs_to_its_nearest_run() -> None:
    outer = run_span("planner")
    delegate = tool(outer, "ask_weather", gen_ai__tool__call__result="Sunny")
    inner = span(
        "invoke_agent weather",
        delegate,
        gen_ai__operation__name="invoke_agent",
        gen_ai__agent__name="weather",
    )
    inner_tool = tool(inner, "get_weather")
    wrapper = span("some framework step", inner)
    deep_tool = tool(wrapper, "get_time")
    runs = {
        run.agent_name: run for run in build_runs([outer, delegate, inner, inner_tool, wrapper, deep_tool])
    }
    assert runs["planner"].tool_names == ["ask_weather"]
    assert runs["weather"].tool_names == ["get_weather", "get_time"]
    assert runs["weather"].parent_span_id == delegate.span_id


def test_only_builds_the_requested_run() -> None:
    outer = run_span("planner")
    inner = span(
        "invoke_agent weather", outer, gen_ai__operation__name="invoke_agent", gen_ai__agent__name="weather"
    )
    (run,) = build_runs([outer, inner], only=[inner.span_id])
    assert run.agent_name == "weather"


def test_usage_prefers_the_run_aggregate_and_never_adds_both_levels() -> None:
    root = run_span(gen_ai__usage__input_tokens=100, gen_ai__usage__output_tokens=20)
    run = only_run([root, chat(root, gen_ai__usage__input_tokens=60, gen_ai__usage__output_tokens=10)])
    assert (run.usage.input_tokens, run.usage.output_tokens) == (100, 20)
    root = run_span()
    spans = [
        root,
        chat(root, gen_ai__usage__input_tokens=60, gen_ai__response__model="m1"),
        chat(root, gen_ai__usage__input_tokens=40, gen_ai__response__model="m2"),
    ]
    run = only_run(spans)
    assert run.usage.input_tokens == 100
    assert run.models == ("m1", "m2")


def test_own_spans_and_unknown_spans_are_ignored() -> None:
    root = run_span()
    mine = span("evaluate x", root, scope=OWN_SCOPE, gen_ai__operation__name="invoke_agent")
    other = span("GET /", root, http__method="GET")
    (run,) = build_runs([root, mine, other])
    assert run.span_id == root.span_id and run.tool_calls == ()


def test_unparsable_messages_count_as_missing() -> None:
    root = run_span(
        gen_ai__input__messages='[{"role": "user", "parts": [{"type": "te',
        gen_ai__output__messages='{"role": "assistant", "parts": [{"type": "te',
    )
    run = only_run([root])
    assert {"input", "output"} <= run.missing


def test_messages_written_as_plain_text_are_the_request_and_the_answer() -> None:
    root = run_span(gen_ai__input__messages="Is it sunny?", gen_ai__output__messages="It is sunny.")
    run = only_run([root])
    assert (run.input, run.output) == ("Is it sunny?", "It is sunny.")


def test_a_tool_span_inside_a_tool_span_is_that_calls_execution_and_its_failure_is_the_calls() -> None:
    """An MCP server continues the caller's trace: its `execute_tool` span under the caller's
    tool span is the same call, executed elsewhere. One call; failed when the execution failed,
    though the caller's span, which hands the model the error as a result, says nothing of it."""
    root = run_span()
    called = tool(root, "get_weather", gen_ai__tool__call__result="Error executing tool get_weather")
    client = span("MCP send tools/call get_weather", called)
    executed = tool(client, "get_weather", status="error", status_message="weather service unavailable")
    run = only_run([root, called, client, executed])
    assert [(call.name, call.state, call.result) for call in run.tool_calls] == [
        ("get_weather", "error", None)
    ]
