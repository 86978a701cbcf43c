"""A later model call's request (the conversation so far, a text its trace holds once) is read
when its messages are first read: a run whose tool spans recorded each call's result is read
without it, one whose request says a call failed is read with it, and a call whose request was
left unread is the same call as one read whole."""

from __future__ import annotations

import copy
import json
import pickle
from dataclasses import replace
from typing import Any

from otel_scorers.conventions.base import ModelCall
from otel_scorers.conventions.formats.parsed_texts import parsed_once
from otel_scorers.conventions.genai import model_call
from otel_scorers.conventions.later_requests import DeferredRequest, unread_request
from otel_scorers.model import AgentRun
from otel_scorers.runs.run_assembly import assemble_runs
from otel_scorers.runs.run_reading import read_run
from otel_scorers.runs.span_roles import span_roles
from otel_scorers.span_record import SpanRecord
from tests.spans import span

QUESTION = {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}
ASKED = {
    "role": "assistant",
    "parts": [{"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}],
}
ANSWER = {"role": "assistant", "parts": [{"type": "text", "content": "Sunny, 21°C."}]}


def weather_trace(response: dict[str, Any]) -> tuple[list[SpanRecord], str]:
    """An agent run of two model calls around a tool whose span recorded its result; the second
    call's request (returned with the spans) holds `response`, the part sent back for the call."""
    later = json.dumps([QUESTION, ASKED, {"role": "tool", "parts": [response]}])
    run = span(
        "invoke_agent weather",
        gen_ai__operation__name="invoke_agent",
        gen_ai__agent__name="weather",
        gen_ai__input__messages=json.dumps([QUESTION]),
        gen_ai__output__messages=json.dumps([ANSWER]),
    )
    first = span(
        "chat m",
        run,
        gen_ai__operation__name="chat",
        gen_ai__input__messages=json.dumps([QUESTION]),
        gen_ai__output__messages=json.dumps([ASKED]),
    )
    tool = span(
        "execute_tool get_weather",
        run,
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name="get_weather",
        gen_ai__tool__call__id="c1",
        gen_ai__tool__call__arguments=json.dumps({"city": "Paris"}),
        gen_ai__tool__call__result="Sunny, 21°C",
    )
    second = span(
        "chat m",
        run,
        gen_ai__operation__name="chat",
        gen_ai__input__messages=later,
        gen_ai__output__messages=json.dumps([ANSWER]),
    )
    return [run, first, tool, second], later


RESPONSE = {"type": "tool_call_response", "id": "c1", "response": "Sunny, 21°C"}


def read(spans: list[SpanRecord], parsed: dict[str, Any]) -> AgentRun:
    """The trace's run, its message texts, once read, remembered in `parsed`."""
    (parts,) = assemble_runs(span_roles(spans))
    return read_run(parts, parsed)


def test_a_run_whose_tool_spans_recorded_their_results_is_read_without_its_later_requests() -> None:
    spans, later = weather_trace(RESPONSE)
    parsed: dict[str, Any] = {}
    run = read(spans, parsed)
    assert [(call.name, call.result, call.state) for call in run.tool_calls] == [
        ("get_weather", "Sunny, 21°C", "ok")
    ]
    assert run.missing == frozenset()
    assert (run.input, run.output) == ("Weather in Paris?", "Sunny, 21°C.")
    assert json.dumps([ASKED]) in parsed
    assert later not in parsed


def test_a_call_the_later_request_says_failed_is_failed_though_its_span_recorded_a_result() -> None:
    spans, later = weather_trace({**RESPONSE, "response": "service down", "error": True})
    parsed: dict[str, Any] = {}
    run = read(spans, parsed)
    assert [(call.name, call.state, call.error) for call in run.tool_calls] == [
        ("get_weather", "error", "service down")
    ]
    assert later in parsed


def test_a_call_whose_request_was_left_unread_is_the_call_read_whole() -> None:
    spans, later = weather_trace(RESPONSE)
    second = spans[3]
    whole = model_call(second)  # outside a trace's reading: read at once
    with parsed_once():
        deferred = model_call(second)
        assert type(deferred) is DeferredRequest
        assert unread_request(deferred) == later
        assert deferred == whole
    assert type(deferred) is ModelCall  # read by the comparison
    assert unread_request(deferred) is None
    assert whole == deferred
    assert [message["role"] for message in deferred.input.items] == ["user", "assistant", "tool"]
    with parsed_once():
        copies = [
            pickle.loads(pickle.dumps(model_call(second))),
            copy.copy(model_call(second)),
            replace(model_call(second), model="other"),
            replace(model_call(second), input=whole.input),
        ]
        shown = repr(model_call(second))
    assert copies[:2] == [whole, whole]
    assert copies[2] == replace(whole, model="other")
    assert copies[3] == whole
    assert shown == repr(whole)
