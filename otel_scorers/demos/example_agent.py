"""A small scripted agent that emits real OpenTelemetry GenAI spans, for the demo and the tests.

Each scripted run opens an `invoke_agent {agent}` span, asks a (scripted) model in `chat` spans,
runs the tools the model asks for in `execute_tool` spans, and answers, writing the messages in
the current GenAI semantic-convention attributes, exactly as an instrumented agent would.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer


class ToolFailure(RuntimeError):
    pass


@dataclass(frozen=True)
class ScriptedRun:
    """What the model will do: call these tools (name, arguments) in turn, then say `answer`."""

    question: str
    tool_calls: Sequence[tuple[str, dict[str, Any]]] = ()
    answer: str = ""
    agent: str = "weather-agent"
    capture_content: bool = True
    conversation_id: str | None = None


def get_weather(city: str) -> str:
    forecasts = {"Paris": "Sunny, 21°C", "Oslo": "Light snow, -3°C", "Lima": "Cloudy, 18°C"}
    if city not in forecasts:
        raise ToolFailure(f"weather service has no station for {city!r}")
    return forecasts[city]


def get_time(city: str) -> str:
    return {"Paris": "14:05", "Oslo": "14:05", "Lima": "08:05"}.get(city, "12:00")


DEFAULT_TOOLS: dict[str, Callable[..., Any]] = {"get_weather": get_weather, "get_time": get_time}

DEMO_RUNS: tuple[ScriptedRun, ...] = (
    ScriptedRun(
        "What's the weather in Paris?",
        [("get_weather", {"city": "Paris"})],
        "It is sunny in Paris today, 21°C.",
    ),
    ScriptedRun(
        "What's the weather in Oslo?",
        [("get_weather", {"city": "Oslo"})],
        "Paris is lovely in spring.",
    ),
    ScriptedRun(
        "What's the weather in Atlantis?",
        [("get_weather", {"city": "Atlantis"})],
        "Sorry, I could not get the weather for Atlantis.",
    ),
    ScriptedRun(
        "What's the weather and time in Lima?",
        [
            ("get_time", {"city": "Lima"}),
            ("get_weather", {"city": "Lima"}),
            ("get_weather", {"city": "Lima"}),
        ],
        "In Lima it is 08:05 and cloudy, 18°C.",
    ),
    ScriptedRun(
        "Tell me a joke.", (), "Why did the cloud stay home? It was feeling under the weather.", "chat-agent"
    ),
    ScriptedRun(
        "What's the weather in Paris?",
        [("get_weather", {"city": "Paris"})],
        "Sunny, 21°C.",
        capture_content=False,
    ),
)


@dataclass
class ExampleAgent:
    tracer: Tracer = field(default_factory=lambda: trace.get_tracer("example-agent"))
    tools: dict[str, Callable[..., Any]] = field(default_factory=lambda: dict(DEFAULT_TOOLS))
    model: str = "scripted-model-1"

    def run(self, script: ScriptedRun) -> str:
        user = {"role": "user", "parts": [{"type": "text", "content": script.question}]}
        messages: list[dict[str, Any]] = [user]
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": script.agent,
            "gen_ai.provider.name": "scripted",
            "gen_ai.request.model": self.model,
        }
        if script.conversation_id:
            attributes["gen_ai.conversation.id"] = script.conversation_id
        with self.tracer.start_as_current_span(
            f"invoke_agent {script.agent}", kind=SpanKind.INTERNAL, attributes=attributes
        ) as run_span:
            if script.capture_content:
                run_span.set_attribute("gen_ai.input.messages", json.dumps([user]))
            for index, (name, arguments) in enumerate(script.tool_calls):
                call_id = f"call_{index + 1}"
                request = {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}
                self._chat(messages, {"role": "assistant", "parts": [request]}, script.capture_content)
                messages.append({"role": "assistant", "parts": [request]})
                result = self._execute_tool(name, call_id, arguments, script.capture_content)
                messages.append(
                    {
                        "role": "tool",
                        "parts": [{"type": "tool_call_response", "id": call_id, "response": result}],
                    }
                )
            answer = {
                "role": "assistant",
                "parts": [{"type": "text", "content": script.answer}],
                "finish_reason": "stop",
            }
            self._chat(messages, answer, script.capture_content)
            if script.capture_content:
                run_span.set_attribute("gen_ai.output.messages", json.dumps([answer]))
        return script.answer

    def _chat(self, messages: list[dict[str, Any]], reply: dict[str, Any], capture: bool) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "scripted",
            "gen_ai.request.model": self.model,
            "gen_ai.response.model": self.model,
            "gen_ai.usage.input_tokens": 12 * len(messages),
            "gen_ai.usage.output_tokens": 9,
        }
        if capture:
            attributes["gen_ai.input.messages"] = json.dumps(messages)
            attributes["gen_ai.output.messages"] = json.dumps([reply])
        with self.tracer.start_as_current_span(
            f"chat {self.model}", kind=SpanKind.CLIENT, attributes=attributes
        ):
            pass

    def _execute_tool(self, name: str, call_id: str, arguments: dict[str, Any], capture: bool) -> Any:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function",
        }
        if capture:
            attributes["gen_ai.tool.call.arguments"] = json.dumps(arguments)
        with self.tracer.start_as_current_span(
            f"execute_tool {name}",
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result = self.tools[name](**arguments)
            except Exception as exc:
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                span.set_attribute("error.type", type(exc).__name__)
                return {"error": str(exc)}
            if capture:
                span.set_attribute(
                    "gen_ai.tool.call.result", result if isinstance(result, str) else json.dumps(result)
                )
            return result
