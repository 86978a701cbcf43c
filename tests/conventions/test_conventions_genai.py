"""The GenAI family: messages in the span-event forms of older semantic conventions, content
that was not captured, and the run rules these conventions rely on (nested model spans, failed
calls and failed runs)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from otel_scorers.runs.otlp_files import read_spans
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanEvent, SpanRecord
from tests.spans import event, only_run, span


def run_span(**attributes: Any) -> SpanRecord:
    return span(
        "invoke_agent weather",
        gen_ai__operation__name="invoke_agent",
        gen_ai__agent__name="weather",
        **attributes,
    )


def tool_span(parent: SpanRecord, name: str, **attributes: Any) -> SpanRecord:
    return span(
        f"execute_tool {name}",
        parent,
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name=name,
        **attributes,
    )


def test_v1_28_span_events_give_input_output_and_the_arguments_tool_spans_lack() -> None:
    root = run_span()
    tool_calls = [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ]
    ask = span(
        "chat gpt",
        root,
        gen_ai__operation__name="chat",
        events=(
            event("gen_ai.system.message", content="Be brief."),
            event("gen_ai.user.message", content="Weather in Paris?"),
            event(
                "gen_ai.choice",
                index=0,
                finish_reason="tool_calls",
                message=json.dumps({"tool_calls": tool_calls}),
            ),
        ),
    )
    weather = tool_span(root, "get_weather", gen_ai__tool__call__id="c1", gen_ai__tool__call__result="Sunny")
    answer = span(
        "chat gpt",
        root,
        gen_ai__operation__name="chat",
        events=(
            event("gen_ai.user.message", content="Weather in Paris?"),
            event("gen_ai.assistant.message", tool_calls=json.dumps(tool_calls)),
            event("gen_ai.tool.message", content="Sunny", id="c1"),
            event("gen_ai.choice", message=json.dumps({"role": "assistant", "content": "It is sunny."})),
        ),
    )
    run = only_run([root, ask, weather, answer])
    assert (run.input, run.output) == ("Weather in Paris?", "It is sunny.")
    (call,) = run.tool_calls
    assert (call.name, call.arguments, call.result, call.state) == (
        "get_weather",
        {"city": "Paris"},
        "Sunny",
        "ok",
    )
    assert [message["role"] for message in run.input_messages] == ["system", "user"]


def test_the_events_attribute_holds_the_same_events_as_one_json_list() -> None:
    root = run_span()
    bodies = [
        {"event.name": "gen_ai.user.message", "role": "user", "content": "Say hello."},
        {"event.name": "gen_ai.choice", "index": 0, "message": {"role": "assistant", "content": "Hello!"}},
    ]
    model = span("chat m", root, gen_ai__operation__name="chat")
    model = replace(model, attributes={**model.attributes, "events": json.dumps(bodies)})
    run = only_run([root, model])
    assert (run.input, run.output) == ("Say hello.", "Hello!")


def test_v1_26_prompt_and_completion_events() -> None:
    root = run_span()
    model = span(
        "chat m",
        root,
        gen_ai__operation__name="chat",
        gen_ai__usage__prompt_tokens=12,
        gen_ai__usage__completion_tokens=3,
        events=(
            event("gen_ai.content.prompt", gen_ai__prompt=json.dumps([{"role": "user", "content": "Hi?"}])),
            event("gen_ai.content.completion", gen_ai__completion=json.dumps([{"content": "Hello."}])),
        ),
    )
    run = only_run([root, model])
    assert (run.input, run.output) == ("Hi?", "Hello.")
    assert (run.usage.input_tokens, run.usage.output_tokens) == (12, 3), "pre-1.27 token names"


def test_operation_details_events_may_carry_one_attribute_each() -> None:
    root = run_span()
    details = "gen_ai.client.inference.operation.details"
    model = span(
        "chat m",
        root,
        gen_ai__operation__name="chat",
        events=(
            event(
                details, gen_ai__system_instructions=json.dumps([{"type": "text", "content": "Be brief."}])
            ),
            event(details, gen_ai__input__messages=json.dumps([{"role": "user", "parts": [text("Hi?")]}])),
            event(
                details,
                gen_ai__output__messages=json.dumps([{"role": "assistant", "parts": [text("Hello.")]}]),
            ),
        ),
    )
    run = only_run([root, model])
    assert (run.input, run.output) == ("Hi?", "Hello.")


def text(content: str) -> dict[str, Any]:
    return {"type": "text", "content": content}


def test_user_text_that_looks_like_json_stays_text() -> None:
    root = run_span()
    model = span(
        "chat m",
        root,
        gen_ai__operation__name="chat",
        events=(
            event("gen_ai.user.message", content='{"city": "Paris"}'),
            event("gen_ai.choice", message='["sunny", "warm"]'),
        ),
    )
    run = only_run([root, model])
    assert (run.input, run.output) == ('{"city": "Paris"}', '["sunny", "warm"]')


def test_redacted_placeholders_are_content_not_captured() -> None:
    root = run_span(gen_ai__input__messages="[REDACTED]", gen_ai__output__messages="__REDACTED__")
    model = span(
        "chat m",
        root,
        gen_ai__operation__name="chat",
        events=(
            event("gen_ai.user.message", content="[REDACTED]"),
            event("gen_ai.choice", message="[REDACTED]"),
        ),
    )
    weather = tool_span(
        root,
        "get_weather",
        gen_ai__tool__call__arguments="[REDACTED]",
        gen_ai__tool__call__result="[REDACTED]",
    )
    run = only_run([root, model, weather])
    assert run.input is None and run.output is None
    assert {"input", "output"} <= run.missing
    (call,) = run.tool_calls
    assert (call.arguments, call.result, call.state) == (None, None, "ok")


def test_parts_stripped_of_their_content_are_not_captured() -> None:
    """Capture off in pydantic-ai: parts keep type, id and name, nothing else."""
    root = run_span()
    model = span(
        "chat m",
        root,
        gen_ai__operation__name="chat",
        gen_ai__input__messages=json.dumps([{"role": "user", "parts": [{"type": "text"}]}]),
        gen_ai__output__messages=json.dumps(
            [{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "get_weather"}]}]
        ),
    )
    run = only_run([root, model, tool_span(root, "get_weather", gen_ai__tool__call__id="c1")])
    assert run.input is None and run.output is None
    assert {"input", "output"} <= run.missing
    assert run.tool_names == ["get_weather"]


def test_a_model_span_inside_another_counts_once() -> None:
    root = run_span()
    outer = span(
        "call_llm",
        root,
        gen_ai__operation__name="chat",
        gen_ai__usage__input_tokens=20,
        gen_ai__usage__output_tokens=10,
        gen_ai__input__messages=json.dumps([{"role": "user", "parts": [text("Hi?")]}]),
        gen_ai__output__messages=json.dumps([{"role": "assistant", "parts": [text("Hello.")]}]),
    )
    inner = span(
        "chat m",
        outer,
        gen_ai__operation__name="chat",
        gen_ai__usage__input_tokens=20,
        gen_ai__usage__output_tokens=10,
    )
    run = only_run([root, outer, inner])
    assert (run.usage.input_tokens, run.usage.output_tokens) == (20, 10)
    assert run.output == "Hello."


def test_a_failed_call_has_no_result_even_when_the_framework_wrote_one() -> None:
    root = run_span()
    failed = tool_span(
        root,
        "get_weather",
        status="error",
        gen_ai__tool__call__result="Error: weather service unavailable",
        events=(event("exception", exception__type="RuntimeError", exception__message="unavailable"),),
    )
    (call,) = only_run([root, failed]).tool_calls
    assert (call.state, call.result, call.error) == ("error", None, "RuntimeError: unavailable")


def _asks_for_a_tool(root: SpanRecord) -> SpanRecord:
    return span(
        "chat m",
        root,
        gen_ai__operation__name="chat",
        gen_ai__input__messages=json.dumps([{"role": "user", "parts": [text("Weather?")]}]),
        gen_ai__output__messages=json.dumps(
            [
                {
                    "role": "assistant",
                    "parts": [{"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {}}],
                }
            ]
        ),
    )


def test_a_run_that_failed_before_the_model_answered_has_no_output() -> None:
    root = run_span(status="error")
    run = only_run([root, _asks_for_a_tool(root), tool_span(root, "get_weather", status="error")])
    assert run.output is None and "output" in run.missing


def test_a_run_that_ended_without_a_final_text_answered_nothing() -> None:
    root = run_span()
    run = only_run(
        [root, _asks_for_a_tool(root), tool_span(root, "get_weather", gen_ai__tool__call__id="c1")]
    )
    assert run.output == "" and "output" not in run.missing


def test_v1_28_events_without_content_are_not_captured() -> None:
    """Capture off: the events still go out, with no content and tool calls reduced to id and name."""
    root = run_span()
    stripped = json.dumps(
        {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather"}}]}
    )
    model = span(
        "chat m",
        root,
        gen_ai__operation__name="chat",
        events=(event("gen_ai.user.message"), event("gen_ai.choice", index=0, message=stripped)),
    )
    run = only_run([root, model, tool_span(root, "get_weather", gen_ai__tool__call__id="c1")])
    assert run.input is None and run.output is None
    assert {"input", "output"} <= run.missing
    assert [(call.name, call.arguments) for call in run.tool_calls] == [("get_weather", None)]


_FAMILY = (
    "pydantic-ai-v2",
    "pydantic-ai-v6",
    "strands-default",
    "strands-latest",
    "google-adk",
    "google-adk-legacy",
    "autogen-builtin",
    "semantic-kernel",
    "ag2",
)
_FIXTURE_TRACES = [
    list(read_spans(path, []))
    for framework in _FAMILY
    for path in sorted((Path(__file__).parent.parent / "fixtures" / "traces" / framework).glob("*.json"))
    if not path.name.endswith(".truth.json")
]
_json_leaf = (
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "x", "[REDACTED]", "{", "null"])
)
_json = st.recursive(
    _json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["role", "parts", "type", "content", "text", "id", "name", "result"]),
            inner,
            max_size=3,
        )
    ),
    max_leaves=8,
)
_READ_KEYS = (
    "gen_ai.operation.name",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.agent.name",
    "events",
    "final_result",
    "pydantic_ai.all_messages",
    "pydantic_ai.new_message_index",
    "tool_arguments",
    "tool_response",
    "gcp.vertex.agent.llm_request",
    "gcp.vertex.agent.llm_response",
    "gcp.vertex.agent.tool_call_args",
    "gcp.vertex.agent.tool_response",
)
#: An attribute value as OTLP may deliver it: a scalar, an array, a key-value list, or JSON text.
_attribute_value = _json | _json.map(json.dumps)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    trace_index=st.integers(0, len(_FIXTURE_TRACES) - 1),
    span_index=st.integers(0, 10_000),
    key_index=st.integers(0, 40),
    in_event=st.booleans(),
    value=_attribute_value,
)
def test_malformed_values_never_break_run_building(
    trace_index: int, span_index: int, key_index: int, in_event: bool, value: Any
) -> None:
    """Any attribute of a real trace replaced by an odd value: runs are still built, no exception."""
    spans = list(_FIXTURE_TRACES[trace_index])
    target = spans[span_index % len(spans)]
    if in_event and target.events:
        events = list(target.events)
        chosen = events[key_index % len(events)]
        keys = list(chosen.attributes) or ["content"]
        events[key_index % len(events)] = SpanEvent(
            chosen.name, chosen.time_ns, {**chosen.attributes, keys[key_index % len(keys)]: value}
        )
        spans[span_index % len(spans)] = replace(target, events=tuple(events))
    else:
        # The keys the conventions read, then whatever else the span carries.
        keys = [*_READ_KEYS, *(key for key in target.attributes if key not in _READ_KEYS)]
        attributes = {**target.attributes, keys[key_index % len(keys)]: value}
        spans[span_index % len(spans)] = replace(target, attributes=attributes)
    for run in build_runs(spans):
        assert run.output is None or isinstance(run.output, str)
        assert run.input is None or isinstance(run.input, str)
        assert all(isinstance(call.name, str) for call in run.tool_calls)


def test_a_tool_call_part_with_a_malformed_id_is_matched_by_name() -> None:
    root = run_span()
    odd = [
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": ["c1"], "name": "get_weather", "arguments": {}}],
        }
    ]
    model = span("chat m", root, gen_ai__operation__name="chat", gen_ai__output__messages=json.dumps(odd))
    run = only_run([root, model, tool_span(root, "get_weather", gen_ai__tool__call__id="c1")])
    assert [(call.name, call.call_id, call.state) for call in run.tool_calls] == [("get_weather", "c1", "ok")]


def test_tool_content_is_missing_only_when_no_finished_call_carries_any() -> None:
    root = run_span()
    blind = only_run([root, tool_span(root, "get_weather"), tool_span(root, "get_time")])
    assert {"tool_arguments", "tool_results"} <= blind.missing
    root = run_span()
    seen = only_run(
        [
            root,
            tool_span(root, "get_weather", gen_ai__tool__call__arguments='{"city": "Paris"}'),
            tool_span(root, "clear_cache", gen_ai__tool__call__result="done"),
        ]
    )
    assert not {"tool_arguments", "tool_results"} & seen.missing
