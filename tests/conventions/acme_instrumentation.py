"""`acme`: a small instrumentation with attribute names of its own, written through the real
OpenTelemetry SDK, and the `conventions:` entry that describes it (tests/conventions/
test_conventions_described.py). Its agent span says what it is in `acme.is` (a key whose name
does not say it holds a kind of span, so no vocabulary is inferred from it: docs/conventions.md),
the request and the reply as JSON, the tool's failure in a span event (its status stays unset),
the conversation in `acme.thread`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers import conventions

SCOPE = "acme.agents"
CONFIG = """
scorers:
  - type: no_tool_errors
conventions:
  - name: acme
    scope: acme.agents
    run:
      when: {attributes: {acme.is: agent}}
      agent_name: acme.agent
      input: {attribute: acme.request, path: text}
      output: {attribute: acme.reply, path: "parts[-1]"}
      conversation_id: acme.thread
    tool:
      when: {attributes: {acme.is: tool}}
      name: {span: name, strip_prefix: "tool:"}
      call_id: acme.call
      arguments: acme.tool.args
      result: acme.tool.out
      error: {event: acme.failure, attribute: reason}
    model:
      when: {attributes: {acme.is: llm}}
      model: acme.llm
      input_tokens: {attribute: acme.usage, path: in}
      output_tokens: {attribute: acme.usage, path: out}
    handoff:
      when: {attributes: {acme.is: handoff}}
      target: acme.to
"""


class Acme:
    """The instrumentation: what an agent framework of its own would write."""

    def __init__(self, provider: TracerProvider) -> None:
        self.tracer = provider.get_tracer(SCOPE)

    def agent(self, name: str, question: str, answer: str, thread: str, steps: list[Any]) -> None:
        with self.tracer.start_as_current_span(f"agent {name}", attributes={"acme.is": "agent"}) as span:
            span.set_attribute("acme.agent", name)
            span.set_attribute("acme.thread", thread)
            span.set_attribute("acme.request", json.dumps({"text": question, "lang": "en"}))
            for step in steps:
                step()
            span.set_attribute("acme.reply", json.dumps({"parts": ["thinking...", answer]}))

    def llm(self) -> None:
        attributes = {"acme.is": "llm", "acme.llm": "acme-small", "acme.usage": '{"in": 12, "out": 5}'}
        with self.tracer.start_as_current_span("llm", attributes=attributes):
            pass

    def tool(
        self, name: str, call_id: str, arguments: dict[str, Any], result: Any, failure: str | None = None
    ) -> None:
        with self.tracer.start_as_current_span(f"tool:{name}", attributes={"acme.is": "tool"}) as span:
            span.set_attribute("acme.call", call_id)
            span.set_attribute("acme.tool.args", json.dumps(arguments))
            if failure is not None:
                span.add_event("acme.failure", {"reason": failure})
            else:
                span.set_attribute("acme.tool.out", json.dumps(result))


def acme_trace() -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    write_acme(Acme(provider))
    return list(exporter.get_finished_spans())


def write_acme(acme: Acme) -> None:
    acme.agent(
        "forecaster",
        "Weather in Paris?",
        "Sunny, 21°C.",
        "thread-7",
        [
            acme.llm,
            lambda: acme.tool("get_weather", "c1", {"city": "Paris"}, {"temp_c": 21, "sky": "sunny"}),
            lambda: acme.tool("get_alerts", "c2", {"city": "Paris"}, None, failure="alerts service down"),
            acme.llm,
        ],
    )


#: What `write_acme` made, as the run it is.
EXPECTED = {
    "agent_name": "forecaster",
    "input": "Weather in Paris?",
    "output": "Sunny, 21°C.",
    "conversation_id": "thread-7",
    "models": ("acme-small",),
    "tokens": (24, 10),
    "tool_calls": [
        ("get_weather", "c1", {"city": "Paris"}, {"temp_c": 21, "sky": "sunny"}, "ok", None),
        ("get_alerts", "c2", {"city": "Paris"}, None, "error", "alerts service down"),
    ],
}


def view(run: Any) -> dict[str, Any]:
    return {
        "agent_name": run.agent_name,
        "input": run.input,
        "output": run.output,
        "conversation_id": run.conversation_id,
        "models": run.models,
        "tokens": (run.usage.input_tokens, run.usage.output_tokens),
        "tool_calls": [
            (call.name, call.call_id, call.arguments, call.result, call.state, call.error)
            for call in run.tool_calls
        ],
    }


@pytest.fixture(autouse=True)
def no_descriptions_after() -> Iterator[None]:
    yield
    conventions.use_descriptions(())


def docs_example(path: str, heading: str) -> dict[str, Any]:
    """The first YAML block after `heading` in the docs file."""
    text = (Path(__file__).parent.parent.parent / "docs" / path).read_text()
    section = text.split(heading, 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    document: dict[str, Any] = yaml.safe_load(block)
    return document
