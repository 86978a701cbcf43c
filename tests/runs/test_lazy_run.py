"""A built run's messages, context, tool definitions, models, usage and conversation id are read
from its spans when first read: a run that only its answer and tool calls are asked of never
reads them, and one that is asked gives what the trace says, as a plain `AgentRun` would."""

from __future__ import annotations

import copy
import json
import pickle
import threading
from dataclasses import FrozenInstanceError, fields, replace
from typing import Any

import pytest

from otel_scorers.model import AgentRun, ContextItem, TokenUsage, ToolDefinition
from otel_scorers.runs.lazy_run import LATER_FIELDS, READ_FIELDS
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanRecord
from tests.spans import span

WEATHER_TOOL = {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}


class ReadKeys(dict[str, Any]):
    """A span's attributes that remember which keys were asked for."""

    def __init__(self, values: dict[str, Any]) -> None:
        super().__init__(values)
        self.asked: list[str] = []

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.append(key)
        return super().get(key, default)


def weather_trace() -> tuple[list[SpanRecord], ReadKeys]:
    """An agent run: a model call that asks for a tool, the tool, the answer; the model span's
    attributes remember what was read of them."""
    question = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]
    asked = [{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "get_weather"}]}]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny, 21°C."}]}]
    run = span(
        "invoke_agent weather",
        gen_ai__operation__name="invoke_agent",
        gen_ai__agent__name="weather",
        gen_ai__conversation__id="conv-1",
        gen_ai__system_instructions="Answer briefly.",
        gen_ai__input__messages=json.dumps(question),
        gen_ai__output__messages=json.dumps(answer),
    )
    model = span(
        "chat m",
        run,
        gen_ai__operation__name="chat",
        gen_ai__request__model="m",
        gen_ai__usage__input_tokens=12,
        gen_ai__usage__output_tokens=5,
        gen_ai__tool__definitions=json.dumps([WEATHER_TOOL]),
        gen_ai__input__messages=json.dumps(question),
        gen_ai__output__messages=json.dumps(asked),
    )
    attributes = ReadKeys(dict(model.attributes))
    model.attributes = attributes
    tool = span(
        "execute_tool get_weather",
        run,
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name="get_weather",
        gen_ai__tool__call__id="c1",
        gen_ai__tool__call__result="Sunny, 21°C",
    )
    for each in (run, model, tool):
        each.resource = {"service.name": "weather-service"}
    return [run, model, tool], attributes


def test_a_runs_tool_definitions_are_read_from_its_spans_only_when_first_read() -> None:
    spans, model_attributes = weather_trace()
    (run,) = build_runs(spans)
    assert run.output == "Sunny, 21°C."
    assert [call.name for call in run.tool_calls] == ["get_weather"]
    assert "gen_ai.tool.definitions" not in model_attributes.asked

    assert run.tool_definitions == (
        ToolDefinition("get_weather", {"type": "object"}, "gen_ai.tool.definitions"),
    )
    assert "gen_ai.tool.definitions" in model_attributes.asked


def test_the_parts_read_later_are_what_the_trace_says() -> None:
    spans, _ = weather_trace()
    (run,) = build_runs(spans)
    assert run.context == (
        ContextItem("Answer briefly.", "system_instructions", "gen_ai.system_instructions"),
        ContextItem("Sunny, 21°C", "tool_result", "get_weather"),
    )
    assert run.conversation_id == "conv-1"
    assert run.models == ("m",)
    assert run.usage == TokenUsage(12, 5)
    assert [message["role"] for message in run.input_messages] == ["user"]
    assert run.output_messages[0]["parts"][0]["content"] == "Sunny, 21°C."


def plain(run: AgentRun) -> AgentRun:
    return AgentRun(**{field.name: getattr(run, field.name) for field in fields(AgentRun)})


def test_a_built_run_equals_a_plain_run_of_the_same_fields_whichever_is_read_first() -> None:
    spans, _ = weather_trace()
    (unread,) = build_runs(spans)
    (read,) = build_runs(spans)
    expected = plain(read)
    assert unread == expected
    assert expected == unread
    assert unread != replace(expected, conversation_id="another")
    assert repr(unread) == repr(expected)


@pytest.mark.parametrize("copied", ["pickle", "copy", "deepcopy"])
def test_a_built_run_is_copied_and_pickled_as_a_plain_agent_run(copied: str) -> None:
    spans, _ = weather_trace()
    (run,) = build_runs(spans)
    copies = {
        "pickle": lambda: pickle.loads(pickle.dumps(run)),
        "copy": lambda: copy.copy(run),
        "deepcopy": lambda: copy.deepcopy(run),
    }
    again = copies[copied]()
    assert type(again) is AgentRun
    assert again == plain(run)


def test_replacing_a_field_of_a_built_run_keeps_every_other() -> None:
    spans, _ = weather_trace()
    (run,) = build_runs(spans)
    given = (ContextItem("given", "given", "config"),)
    changed = replace(run, context=given)
    assert changed.context == given
    assert changed.tool_definitions == run.tool_definitions
    assert plain(changed) == replace(plain(run), context=given)


def test_a_built_run_is_frozen_like_any_run() -> None:
    spans, _ = weather_trace()
    (run,) = build_runs(spans)
    with pytest.raises(FrozenInstanceError):
        run.context = ()  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        run.output = "changed"  # type: ignore[misc]


def test_threads_reading_a_run_at_once_all_see_the_same_parts() -> None:
    spans, _ = weather_trace()
    (run,) = build_runs(spans)
    seen: list[Any] = []
    start = threading.Barrier(4)

    def read() -> None:
        start.wait()
        seen.append((run.context, run.tool_definitions, run.usage, run.conversation_id))

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 4 and all(found == seen[0] for found in seen)
    assert seen[0][3] == "conv-1"


def test_a_built_run_is_read_from_its_spans_only_when_a_field_is_first_read() -> None:
    spans, model_attributes = weather_trace()
    (run,) = build_runs(spans)
    assert "gen_ai.output.messages" not in model_attributes.asked
    assert [call.name for call in run.tool_calls] == ["get_weather"]
    assert "gen_ai.output.messages" in model_attributes.asked
    assert (run.trace_id, run.span_id) == (spans[0].trace_id, spans[0].span_id)
    assert run.output == "Sunny, 21°C."


def test_every_field_of_a_run_is_read_in_one_of_the_two_steps() -> None:
    assert sorted((*READ_FIELDS, *LATER_FIELDS)) == sorted(field.name for field in fields(AgentRun))
