"""The weather scenarios' agent runs, written by the real OpenTelemetry SDK in a tracing vocabulary
of a framework's own that no reader or description knows (`Vocabulary`: `acme.kind`,
`acme.input`, ...), under a scope no reader knows.

The generator knows what it wrote: each scenario is a script (`genai_semconv_scenarios`), and
its truth the same script as runs in the fixtures' truth-file format. A framework tracing
itself so says what kind of work each span is in one key, and keeps each span's input, output
and name in keys beside it: an agent's request and answer, a model call's messages (OpenAI's
chat shape) and its model, a tool's arguments and result (as JSON), a failed tool's span ERROR.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode, Tracer

from otel_scorers.otlp.trace_file import trace_lines
from tests.conventions.genai_semconv_scenarios import Call, Run, Scenario, truth_runs

SCOPE = "acme.agents"
MODEL = "gpt-4o-mini"


@dataclass(frozen=True)
class Vocabulary:
    """The keys a framework writes: its kind key and its values, and the keys (under the kind
    key's prefix) of each span's input, output and name."""

    name: str
    kind: str
    input: str
    output: str
    span_name: str
    model: str
    #: Where an agent span keeps the conversation it is a turn of.
    conversation: str
    agent: str = "agent"
    tool: str = "tool"
    llm: str = "llm"
    #: Every value written as JSON (a string with its quotes), as MLflow writes its own.
    json_values: bool = False

    def value(self, value: Any) -> str:
        if self.json_values or not isinstance(value, str):
            return json.dumps(value)
        return value


VOCABULARIES = (
    Vocabulary(
        "dotted", "acme.kind", "acme.input", "acme.output", "acme.name", "acme.model", "acme.session.id"
    ),
    Vocabulary(
        "colons",
        "acme:meta:subtype",
        "acme:input",
        "acme:output",
        "acme:name",
        "acme:model",
        "acme:sessionId",
        agent="flow",
        tool="tool",
        llm="model",
    ),
    Vocabulary(
        "observation",
        "acme.observation.type",
        "acme.observation.input",
        "acme.observation.output",
        "acme.observation.name",
        "acme.observation.model.name",
        "session.id",
        agent="AGENT",
        tool="TOOL",
        llm="GENERATION",
    ),
    Vocabulary(
        "json-values",
        "acme.spanType",
        "acme.spanInputs",
        "acme.spanOutputs",
        "acme.name",
        "acme.llm.model",
        "acme.thread_id",
        agent="AGENT",
        tool="TOOL",
        llm="CHAT_MODEL",
        json_values=True,
    ),
)


class VocabularyWriter:
    """Writes a scenario's runs as spans in one vocabulary."""

    def __init__(self, tracer: Tracer, words: Vocabulary) -> None:
        self.tracer = tracer
        self.words = words

    def attributes(self, kind: str, name: str, given: Any, returned: Any = None) -> dict[str, Any]:
        words = self.words
        found = {
            words.kind: words.value(kind),
            words.span_name: words.value(name),
            words.input: words.value(given),
        }
        if returned is not None:
            found[words.output] = words.value(returned)
        return found

    def run(self, run: Run) -> None:
        words = self.words
        with self.tracer.start_as_current_span(
            run.agent, attributes=self.attributes(words.agent, run.agent, run.question)
        ) as span:
            messages: list[dict[str, Any]] = [{"role": "system", "content": "You answer about the weather."}]
            for question, answer in run.history:
                messages += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
            messages.append({"role": "user", "content": run.question})
            for number, step in enumerate(run.steps):
                asked = [
                    {
                        "id": f"call_{number}_{index}",
                        "type": "function",
                        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                    }
                    for index, call in enumerate(step)
                ]
                reply = {"role": "assistant", "content": None, "tool_calls": asked}
                self.model(messages, reply)
                messages.append(reply)
                for index, call in enumerate(step):
                    messages.append(
                        {"role": "tool", "tool_call_id": f"call_{number}_{index}", "content": self.tool(call)}
                    )
            self.model(messages, {"role": "assistant", "content": run.answer})
            span.set_attribute(words.output, words.value(run.answer))
            if run.conversation_id is not None:
                span.set_attribute(words.conversation, words.value(run.conversation_id))

    def model(self, messages: list[dict[str, Any]], reply: dict[str, Any]) -> None:
        words = self.words
        attributes = self.attributes(
            words.llm, MODEL, {"messages": messages}, {"choices": [{"message": reply}]}
        )
        attributes[words.model] = words.value(MODEL)
        with self.tracer.start_as_current_span(f"chat {MODEL}", attributes=attributes):
            pass

    def tool(self, call: Call) -> str:
        words = self.words
        with self.tracer.start_as_current_span(
            call.name, attributes=self.attributes(words.tool, call.name, call.arguments)
        ) as span:
            if call.agent is not None:
                self.run(call.agent)
            if call.error is not None:
                span.set_status(Status(StatusCode.ERROR, call.error))
                span.record_exception(RuntimeError(call.error))
                return f"Error: {call.error}"
            span.set_attribute(words.output, json.dumps(call.returned))
            return json.dumps(call.returned)


def scenario_truth(words: Vocabulary, scenario: Scenario) -> dict[str, Any]:
    return {
        "framework": f"own-vocabulary-{words.name}",
        "scenario": scenario.name,
        "versions": {"opentelemetry-sdk": version("opentelemetry-sdk")},
        "runs": [truth for run in scenario.traces for truth in truth_runs(run)],
        "notes": f"a vocabulary of its own ({words.kind}), scope {SCOPE}, written by tests/conventions/own_vocabulary.py",
    }


def write_scenario(directory: Path, words: Vocabulary, scenario: Scenario) -> Path:
    """`<directory>/<scenario>.json` (the runs, each a trace of its own, as OTLP/JSON lines)
    and its `.truth.json`; the trace's path."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    writer = VocabularyWriter(provider.get_tracer(SCOPE), words)
    for run in scenario.traces:
        writer.run(run)
    provider.shutdown()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{scenario.name}.json"
    path.write_bytes(b"".join(trace_lines(exporter.get_finished_spans())))
    truth = directory / f"{scenario.name}.truth.json"
    truth.write_text(json.dumps(scenario_truth(words, scenario), indent=1, ensure_ascii=False))
    return path
