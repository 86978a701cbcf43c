"""A hand-written agent over litellm, traced by litellm's own OpenTelemetry callback in its default
mode, read in-process by the ScoringSpanProcessor: the run is found and named, its request and tool
call read, and its answer is the model's or, when litellm's logging worker wrote the last call
after the agent span ended, unrecorded: never empty, never another call's text.

The model is the fixtures' scripted OpenAI-compatible server on 127.0.0.1 (stdlib only); litellm
makes real HTTP calls to it. The callback is given the test's tracer provider, so nothing global
is set, and litellm's callbacks are restored afterwards.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm: no price-list download

import litellm
from litellm.integrations.opentelemetry import OpenTelemetry
from opentelemetry.trace import Tracer

from otel_scorers import ScoringSpanProcessor

from ..conftest import RunRecorder, Telemetry
from ..waiting import wait_until

_spec = importlib.util.spec_from_file_location(
    "fake_openai", Path(__file__).parent.parent / "fixtures" / "generate" / "common" / "fake_openai.py"
)
assert _spec is not None and _spec.loader is not None
fake_openai = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fake_openai)

QUESTION = "What is the weather in Paris?"
ANSWER = "It is sunny and 21°C in Paris."
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Return the current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


class CountedOpenTelemetry(OpenTelemetry):  # type: ignore[misc]
    """litellm's callback, counting the calls its logging worker has written."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.written = 0

    def log_success_event(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().log_success_event(*args, **kwargs)
        finally:
            self.written += 1


def run_agent(tracer: Tracer, base_url: str) -> int:
    """The tool loop a user writes: an invoke_agent span, litellm calls, execute_tool spans; how
    many calls it made."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather_agent"}
    calls = 0
    with tracer.start_as_current_span("invoke_agent weather_agent", attributes=attributes):
        for _ in range(4):
            calls += 1
            response = litellm.completion(
                model="openai/gpt-4o-mini",
                messages=messages,
                tools=[WEATHER_TOOL],
                api_base=base_url,
                api_key="sk-test",
            )
            message = response.choices[0].message
            if not message.tool_calls:
                return calls
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                tool = {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": call.function.name,
                    "gen_ai.tool.call.id": call.id,
                    "gen_ai.tool.call.arguments": call.function.arguments,
                }
                with tracer.start_as_current_span(
                    f"execute_tool {call.function.name}", attributes=tool
                ) as span:
                    span.set_attribute("gen_ai.tool.call.result", "Sunny, 21°C")
                messages.append({"role": "tool", "tool_call_id": call.id, "content": "Sunny, 21°C"})
    return calls


def test_a_litellm_agent_in_its_default_mode_is_read_in_process(telemetry: Telemetry) -> None:
    recorder = RunRecorder()
    processor = ScoringSpanProcessor([recorder], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    callbacks = litellm.callbacks
    callback = CountedOpenTelemetry(tracer_provider=telemetry.tracer_provider)
    litellm.callbacks = [callback]
    try:
        with fake_openai.FakeOpenAI() as server:
            server.script([("get_weather", {"city": "Paris"})], ANSWER)
            calls = run_agent(telemetry.tracer_provider.get_tracer("weather-app"), server.base_url)
            wait_until(
                lambda: callback.written == calls, 60, f"litellm's logging worker to write {calls} calls"
            )
    finally:
        litellm.callbacks = callbacks
    assert processor.force_flush(10_000)
    (run,) = recorder.runs
    assert (run.agent_name, run.input, run.convention) == ("weather_agent", QUESTION, "litellm")
    assert [(call.name, call.arguments, call.result) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C")
    ]
    assert run.output == ANSWER or (run.output is None and "output" in run.unrecorded), (
        run.output,
        json.dumps(sorted(run.missing)),
    )
