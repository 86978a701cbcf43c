"""The weather scenarios' agent runs, written by the real OpenTelemetry SDK in every form the GenAI
semantic conventions have taken, under a scope no reader knows (`acme.agents`).

The generator knows what it wrote: each scenario is a script (the agent, the user's words, the
tool calls each model response asks for, each tool's result or failure, the answer), spans are
written from it, and its truth is the same script as runs in the fixtures' truth-file format
(`tests/fixtures/generate/common/otlp_fixture.py`). "Right" is what it is for the fixtures: the
fixture tests' `assert_run_matches`, which `bench/fidelity.py` counts too.

The forms (`FORMS`) differ in where a model call's messages are kept (`Content`) and in the shape
of the spans around them:

- `current` (1.37+): `gen_ai.input.messages` / `gen_ai.output.messages` / `gen_ai.system_instructions`
  on the agent span and on each `chat {model}` span, the tools' arguments and results on their
  `execute_tool {tool}` spans, `gen_ai.provider.name`, a workflow named by `gen_ai.agent.name`.
- `model-content-only`: the content on the model spans only (tool-call arguments as JSON text),
  none on tool spans, each model call recorded twice (a framework's span around the client's),
  the conversation id on the model spans only.
- `details-event` (1.38): the content in a `gen_ai.client.inference.operation.details` event on
  agent and model spans.
- `message-events` (1.28-1.36): one span event per message (`gen_ai.system.message`,
  `gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message`, `gen_ai.choice`),
  `gen_ai.system`, no arguments or results on tool spans; `no-tool-spans`: the same, tools untraced.
- `prompt-events` (1.26): `gen_ai.content.prompt` / `gen_ai.content.completion` events holding
  `gen_ai.prompt` / `gen_ai.completion`, model spans naming no operation.
- `indexed` (the older OpenLLMetry style): `gen_ai.prompt.{i}.*` / `gen_ai.completion.{i}.*`
  attributes, tool calls indexed under them, on `openai.chat` spans with no operation name, tool
  spans without call ids.
- `agent-content-only`, `agent-and-tools-only`: the content on the agent span only, its model
  calls traced without it or not at all (the agent's output then every message of the run).
- `truncated`: as `current`, under an attribute length limit that cuts long messages short.
- `name-in-span-only`: as `current`, agents and tools named only by their spans' names, a
  `create_agent` span beside each run under an application's own root span, tool spans siblings
  of the model span that asked for them (children of it in the other forms), a failed tool
  marked by `error.type` alone with its error text as its result.

Write every form's corpus for `bench/fidelity.py`:
    PYTHONPATH=$PWD python -m tests.conventions.genai_semconv_matrix DIR && python bench/fidelity.py DIR/*
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from otel_scorers.otlp.trace_file import trace_lines
from tests.conventions.genai_semconv_messages import (
    Content,
    Message,
    genai_content,
    indexed_content,
    model_events,
)
from tests.conventions.genai_semconv_scenarios import SCENARIOS, Call, Run, Scenario, truth_runs

SCOPE = "acme.agents"
MODEL = "gpt-4o-mini"


@dataclass(frozen=True)
class Form:
    name: str
    versions: str
    content: Content
    agent_content: bool = False
    provider_key: str = "gen_ai.provider.name"
    tool_content: bool = False
    agent_name_attribute: bool = True
    create_agent: bool = False
    tool_under_model: bool = True
    #: Whether model spans name their operation (`gen_ai.operation.name`, 1.27+).
    model_operation: bool = True
    #: Whether the run's model calls are traced at all.
    model_spans: bool = True
    #: Whether a failed tool's span is marked ERROR with an exception event, or carries
    #: `error.type` alone.
    tool_status: bool = True
    #: Whether tool spans carry the call's id (`gen_ai.tool.call.id`).
    tool_call_ids: bool = True
    #: Whether a failed tool's span records the error text it sent the model as its result.
    error_as_result: bool = False
    #: The key naming a workflow: `gen_ai.workflow.name` (1.38-1.41), `gen_ai.agent.name` since.
    workflow_name_key: str = "gen_ai.workflow.name"
    #: Whether the agent span's output messages are every message the run produced (tool calls,
    #: tool results, the answer), not the answer alone.
    agent_output_all: bool = False
    #: Whether tool spans name their tool in `gen_ai.tool.name` (else in their span name only).
    tool_name_attribute: bool = True
    #: Whether a tool call part's arguments are JSON text rather than an object.
    arguments_as_text: bool = False
    #: Whether each model call is recorded twice, a framework's span around the client's.
    model_twice: bool = False
    #: Whether agent spans carry the conversation id (model spans always do).
    agent_conversation_id: bool = True
    #: Whether tools are traced: without their spans, the model calls' messages hold the calls.
    tool_spans: bool = True
    #: The SDK's attribute value length limit (`OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`), if any.
    attribute_length: int | None = None


FORMS = (
    Form(
        "current",
        "1.37+",
        Content.ATTRIBUTES,
        agent_content=True,
        tool_content=True,
        workflow_name_key="gen_ai.agent.name",
    ),
    Form(
        "model-content-only",
        "1.37+",
        Content.ATTRIBUTES,
        arguments_as_text=True,
        model_twice=True,
        agent_conversation_id=False,
    ),
    Form("details-event", "1.38+", Content.DETAILS_EVENT, agent_content=True, tool_content=True),
    Form("message-events", "1.28-1.36", Content.MESSAGE_EVENTS, provider_key="gen_ai.system"),
    Form(
        "prompt-events",
        "1.26",
        Content.PROMPT_EVENTS,
        provider_key="gen_ai.system",
        model_operation=False,
    ),
    Form("agent-content-only", "1.37+", Content.NONE, agent_content=True, tool_content=True),
    Form(
        "agent-and-tools-only",
        "1.37+",
        Content.NONE,
        agent_content=True,
        tool_content=True,
        model_spans=False,
        agent_output_all=True,
    ),
    Form(
        "truncated",
        "1.37+",
        Content.ATTRIBUTES,
        agent_content=True,
        tool_content=True,
        attribute_length=300,
    ),
    Form(
        "no-tool-spans",
        "1.28-1.36",
        Content.MESSAGE_EVENTS,
        provider_key="gen_ai.system",
        tool_spans=False,
    ),
    Form(
        "indexed",
        "OpenLLMetry <0.40",
        Content.INDEXED,
        provider_key="gen_ai.system",
        tool_call_ids=False,
    ),
    Form(
        "name-in-span-only",
        "1.37+",
        Content.ATTRIBUTES,
        agent_content=True,
        tool_content=True,
        agent_name_attribute=False,
        create_agent=True,
        tool_under_model=False,
        tool_status=False,
        error_as_result=True,
        tool_name_attribute=False,
    ),
)
FORMS_BY_NAME = {form.name: form for form in FORMS}


def scenario_truth(form: Form, scenario: Scenario) -> dict[str, Any]:
    return {
        "framework": f"genai-{form.name}",
        "scenario": scenario.name,
        "versions": {"opentelemetry-sdk": version("opentelemetry-sdk")},
        "runs": [truth for run in scenario.traces for truth in truth_runs(run)],
        "notes": f"GenAI semantic conventions {form.versions}, messages as {form.content.value}, "
        f"scope {SCOPE}, written by tests/conventions/genai_semconv_matrix.py",
    }


def scenario_trace(form: Form, scenario: Scenario) -> dict[str, Any]:
    """The scenario's spans, written by the real SDK in `form`, as one OTLP/JSON request."""
    exporter = InMemorySpanExporter()
    provider = form_provider(form)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    write_spans(provider, form, scenario)
    provider.shutdown()
    documents = [json.loads(line) for line in trace_lines(exporter.get_finished_spans())]
    return {"resourceSpans": [spans for document in documents for spans in document["resourceSpans"]]}


def form_provider(form: Form) -> TracerProvider:
    """A tracer provider with the form's attribute length limit."""
    return TracerProvider(span_limits=SpanLimits(max_attribute_length=form.attribute_length))


def write_spans(provider: TracerProvider, form: Form, scenario: Scenario) -> None:
    """The scenario's runs, as spans of `form` written through `provider`."""
    writer = RunWriter(provider.get_tracer(SCOPE), form, scenario.capture)
    if scenario.workflow is not None:
        writer.workflow(scenario.workflow, scenario.traces)
    elif scenario.one_trace:
        writer.trace(scenario.traces, root=True)
    else:
        for run in scenario.traces:
            writer.trace((run,))


def write_scenario(directory: Path, form: Form, scenario: Scenario) -> Path:
    """`<directory>/<scenario>.json` and its `.truth.json`; the trace's path."""
    directory.mkdir(parents=True, exist_ok=True)
    trace_path = directory / f"{scenario.name}.json"
    trace_path.write_text(json.dumps(scenario_trace(form, scenario), ensure_ascii=False))
    truth_path = directory / f"{scenario.name}.truth.json"
    truth_path.write_text(json.dumps(scenario_truth(form, scenario), indent=1, ensure_ascii=False))
    return trace_path


def cases() -> Iterator[tuple[Form, Scenario]]:
    for form in FORMS:
        for scenario in SCENARIOS:
            yield form, scenario


class RunWriter:
    """Writes scripted runs as spans of one form."""

    def __init__(self, tracer: Tracer, form: Form, capture: bool = True) -> None:
        self.tracer = tracer
        self.form = form
        self.capture = capture
        self._call_ids = 0

    def trace(self, runs: tuple[Run, ...], root: bool = False) -> None:
        """The runs as one trace, under an application's root span when `root` or where the form
        has one (with a `create_agent` span before each run)."""
        if not (root or self.form.create_agent):
            self._runs(runs)
            return
        with self.tracer.start_as_current_span("POST /chat", kind=SpanKind.SERVER):
            self._runs(runs)

    def workflow(self, name: str, runs: tuple[Run, ...]) -> None:
        """The runs one after the other in a workflow: one trace, its span holding the first
        run's request and the last one's answer where agent spans hold content."""
        attributes = {"gen_ai.operation.name": "invoke_workflow", self.form.workflow_name_key: name}
        with self.tracer.start_as_current_span(f"invoke_workflow {name}", attributes=attributes) as span:
            if self.form.agent_content and self.capture:
                question = {"role": "user", "content": runs[0].question}
                answer = {"role": "assistant", "content": runs[-1].answer}
                self._agent_content(span, [question], [answer])
            self._runs(runs)

    def _runs(self, runs: tuple[Run, ...]) -> None:
        for run in runs:
            if self.form.create_agent:
                self._create_agent(run.agent)
            self.run(run)

    def _agent_content(self, span: Span, messages: list[Message], outputs: list[Message]) -> None:
        if self.form.content is Content.DETAILS_EVENT:
            span.add_event("gen_ai.client.inference.operation.details", genai_content(messages, outputs))
        else:
            span.set_attributes(genai_content(messages, outputs))

    def _create_agent(self, agent: str) -> None:
        attributes = {"gen_ai.operation.name": "create_agent", self.form.provider_key: "openai"}
        with self.tracer.start_as_current_span(f"create_agent {agent}", attributes=attributes):
            pass

    def run(self, run: Run) -> None:
        form = self.form
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            form.provider_key: "openai",
            "gen_ai.request.model": MODEL,
        }
        if form.agent_name_attribute:
            attributes["gen_ai.agent.name"] = run.agent
        if run.conversation_id is not None and form.agent_conversation_id:
            attributes["gen_ai.conversation.id"] = run.conversation_id
        history: list[Message] = []
        for asked, answered in run.history:
            history += [{"role": "user", "content": asked}, {"role": "assistant", "content": answered}]
        request = [*history, {"role": "user", "content": run.question}]
        answer: Message = {"role": "assistant", "content": run.answer}
        if not run.remote:
            self._invocation(run, attributes, request)
            return
        client = {**attributes, "server.address": "agents.example.com"}
        name = f"invoke_agent {run.agent}"
        with self.tracer.start_as_current_span(name, kind=SpanKind.CLIENT, attributes=client) as span:
            if form.agent_content and self.capture:
                self._agent_content(span, request, [answer])
            self._invocation(run, attributes, request)

    def _invocation(self, run: Run, attributes: dict[str, Any], request: list[Message]) -> None:
        """The agent's own span: its delegates, then its loop of model and tool calls."""
        form = self.form
        messages = request
        with self.tracer.start_as_current_span(f"invoke_agent {run.agent}", attributes=attributes) as span:
            for delegate in run.delegates:
                self.run(delegate)
            for step in run.steps:
                requests = [self._request(call) for call in step]
                asked: Message = {"role": "assistant", "content": None, "tool_calls": requests}
                with self._model_call(messages, asked, run.conversation_id):
                    results = self._tools(step, requests) if form.tool_under_model else []
                if not form.tool_under_model:
                    results = self._tools(step, requests)
                messages = [*messages, asked, *results]
            answer: Message = {"role": "assistant", "content": run.answer}
            with self._model_call(messages, answer, run.conversation_id):
                pass
            if form.agent_content and self.capture:
                produced = messages[len(request) :] if form.agent_output_all else []
                self._agent_content(span, request, [*produced, answer])

    def _tools(self, step: tuple[Call, ...], requests: list[Message]) -> list[Message]:
        return [self._tool(call, request["id"]) for call, request in zip(step, requests, strict=True)]

    def _request(self, call: Call) -> Message:
        self._call_ids += 1
        function = {"name": call.name, "arguments": json.dumps(call.arguments)}
        return {"id": f"call_{self._call_ids}", "type": "function", "function": function}

    def _model_call(self, messages: list[Message], output: Message, conversation_id: str | None) -> Any:
        form = self.form
        attributes: dict[str, Any] = {form.provider_key: "openai", "gen_ai.request.model": MODEL}
        if form.content is Content.INDEXED:
            attributes["llm.request.type"] = "chat"
            if self.capture:
                attributes.update(indexed_content(messages, output))
            name = "openai.chat"
        else:
            name = f"chat {MODEL}"
        if form.model_operation and form.content is not Content.INDEXED:
            attributes["gen_ai.operation.name"] = "chat"
        attributes["gen_ai.response.model"] = MODEL
        attributes["gen_ai.response.finish_reasons"] = ("tool_calls" if output.get("tool_calls") else "stop",)
        if conversation_id is not None:
            attributes["gen_ai.conversation.id"] = conversation_id
        if form.content is Content.ATTRIBUTES and self.capture:
            attributes.update(genai_content(messages, [output], form.arguments_as_text))
        if not form.model_spans:
            return nullcontext()
        events = model_events(form.content, messages, output) if self.capture else []
        span = self.tracer.start_as_current_span(name, kind=SpanKind.CLIENT, attributes=attributes)
        if form.model_twice:
            framework = self.tracer.start_as_current_span(name, attributes=attributes)
            return _SpanWithEvents(framework, events, inner=_SpanWithEvents(span, events))
        return _SpanWithEvents(span, events)

    def _tool(self, call: Call, call_id: str) -> Message:
        """Runs the tool inside its span; the message that gives the model its result."""
        if not self.form.tool_spans:
            if call.agent is not None:
                self.run(call.agent)
            return _tool_message(call, call_id)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.type": "function",
        }
        if self.form.tool_name_attribute:
            attributes["gen_ai.tool.name"] = call.name
        if self.form.tool_call_ids:
            attributes["gen_ai.tool.call.id"] = call_id
        content = self.form.tool_content and self.capture
        if content:
            attributes["gen_ai.tool.call.arguments"] = json.dumps(call.arguments)
        message = _tool_message(call, call_id)
        with self.tracer.start_as_current_span(
            f"execute_tool {call.name}",
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            if call.agent is not None:
                self.run(call.agent)
            if call.error is not None:
                span.set_attribute("error.type", "RuntimeError")
                if self.form.tool_status:
                    span.record_exception(RuntimeError(call.error))
                    span.set_status(Status(StatusCode.ERROR, call.error))
            if content and (call.error is None or self.form.error_as_result):
                span.set_attribute("gen_ai.tool.call.result", message["content"])
        return message


def _tool_message(call: Call, call_id: str) -> Message:
    """The message that gives the model the tool's result, or its error."""
    if call.error is not None:
        return {"role": "tool", "tool_call_id": call_id, "content": f"Error: {call.error}"}
    returned = call.returned if isinstance(call.returned, str) else json.dumps(call.returned)
    return {"role": "tool", "tool_call_id": call_id, "content": returned}


class _SpanWithEvents:
    """A span context manager that adds `events` to the span as it opens."""

    def __init__(
        self, manager: Any, events: list[tuple[str, dict[str, Any]]], inner: _SpanWithEvents | None = None
    ) -> None:
        self.manager = manager
        self.events = events
        self.inner = inner

    def __enter__(self) -> Span:
        span: Span = self.manager.__enter__()
        for name, attributes in self.events:
            span.add_event(name, attributes)
        return self.inner.__enter__() if self.inner is not None else span

    def __exit__(self, *exc: Any) -> Any:
        if self.inner is not None:
            self.inner.__exit__(*exc)
        return self.manager.__exit__(*exc)


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        raise SystemExit("usage: python -m tests.conventions.genai_semconv_matrix OUT_DIR")
    for form, scenario in cases():
        write_scenario(Path(argv[0]) / f"genai-{form.name}", form, scenario)


if __name__ == "__main__":
    main(sys.argv[1:])
