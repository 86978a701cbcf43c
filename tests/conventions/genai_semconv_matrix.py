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
  `execute_tool {tool}` spans, `gen_ai.provider.name`.
- `model-content-only`: the same with the content on the model spans only.
- `details-event` (1.38): the content in a `gen_ai.client.inference.operation.details` event on
  each model span.
- `message-events` (1.28-1.36): one span event per message (`gen_ai.system.message`,
  `gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message`, `gen_ai.choice`),
  `gen_ai.system`, no arguments or results on tool spans.
- `prompt-events` (1.26): `gen_ai.content.prompt` / `gen_ai.content.completion` events holding
  `gen_ai.prompt` / `gen_ai.completion`.
- `indexed` (the older OpenLLMetry style): `gen_ai.prompt.{i}.*` / `gen_ai.completion.{i}.*`
  attributes, tool calls indexed under them, on `openai.chat` spans with no operation name.
- `name-in-span-only`: as `current`, the agent named only by its span's name, a `create_agent`
  span beside each run under an application's own root span, tool spans siblings of the model
  span that asked for them (children of it in the other forms).

Write every form's corpus for `bench/fidelity.py`:
    PYTHONPATH=$PWD python -m tests.conventions.genai_semconv_matrix DIR && python bench/fidelity.py DIR/*
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from enum import Enum
from importlib.metadata import version
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from otel_scorers.otlp.trace_file import trace_lines

SCOPE = "acme.agents"
MODEL = "gpt-4o-mini"
INSTRUCTIONS = "You are a weather assistant."
Message = dict[str, Any]


class Content(Enum):
    """Where a model call's messages are kept."""

    ATTRIBUTES = "attributes"
    DETAILS_EVENT = "details event"
    MESSAGE_EVENTS = "message events"
    PROMPT_EVENTS = "prompt events"
    INDEXED = "indexed attributes"
    NONE = "nowhere"


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


@dataclass(frozen=True)
class Call:
    """A tool call the model asks for: what the tool returned, or the error it raised; a tool
    that runs another agent (`agent`) returns that agent's answer."""

    name: str
    arguments: dict[str, Any]
    result: Any = None
    error: str | None = None
    agent: Run | None = None

    @property
    def returned(self) -> Any:
        return self.agent.answer if self.agent is not None else self.result


@dataclass(frozen=True)
class Run:
    """One agent run: the question, the tool calls each model response asks for, the answer;
    earlier turns of its conversation (question, answer) come before the question."""

    agent: str
    question: str
    steps: tuple[tuple[Call, ...], ...]
    answer: str
    history: tuple[tuple[str, str], ...] = ()
    conversation_id: str | None = None
    #: Agents the run's own code invokes directly (no tool call) before it asks its model.
    delegates: tuple[Run, ...] = ()
    #: A remote agent: the caller's CLIENT `invoke_agent` span around the agent's own.
    remote: bool = False


@dataclass(frozen=True)
class Scenario:
    """Runs, each a trace of its own unless `one_trace` (under an application's span, or the
    `workflow` named); with `capture` off no span holds content."""

    name: str
    traces: tuple[Run, ...]
    one_trace: bool = False
    workflow: str | None = None
    capture: bool = True


WEATHER = Call("get_weather", {"city": "Paris"}, result="Sunny, 21°C")
TIME = Call("get_time", {"city": "Paris"}, result="14:05")
BROKEN_WEATHER = Call("get_weather", {"city": "Paris"}, error="weather service unavailable")
QUESTION = "What is the weather in Paris?"
ANSWER = "It is sunny and 21°C in Paris."
TIME_QUESTION = "And what time is it there?"
TIME_ANSWER = "It is 14:05 in Paris."
REPORT = {"city": "Paris", "temp_c": 21, "sunny": True, "wind": None}
LONDON_WEATHER = Call("get_weather", {"city": "London"}, result="Rainy, 12°C")
WRITER = Run("writer", "Sunny and 21°C in Paris.", (), "Paris today: sunny, 21°C. Enjoy!")
EXPERT = Run(
    "weather_agent", "What is the weather in Paris today?", ((WEATHER,),), "Sunny and 21°C in Paris."
)
SCENARIOS = (
    Scenario("tool_then_answer", (Run("weather_agent", QUESTION, ((WEATHER,),), ANSWER),)),
    Scenario(
        "two_tools",
        (
            Run(
                "weather_agent",
                "What is the weather in Paris, and what time is it there?",
                ((WEATHER, TIME),),
                "It is sunny and 21°C in Paris, and the local time is 14:05.",
            ),
        ),
    ),
    Scenario(
        "failing_tool",
        (
            Run(
                "weather_agent",
                QUESTION,
                ((BROKEN_WEATHER,),),
                "Sorry, I could not get the weather for Paris: the weather service is unavailable.",
            ),
        ),
    ),
    Scenario("no_tool", (Run("weather_agent", "Say hello in French.", (), "Bonjour !"),)),
    Scenario(
        "multi_turn",
        (
            Run("weather_agent", QUESTION, ((WEATHER,),), ANSWER, conversation_id="conv-7"),
            Run(
                "weather_agent",
                TIME_QUESTION,
                ((TIME,),),
                TIME_ANSWER,
                history=((QUESTION, ANSWER),),
                conversation_id="conv-7",
            ),
        ),
    ),
    Scenario(
        "nested",
        (
            Run(
                "trip_planner",
                "Should I pack an umbrella for Paris today?",
                ((Call("ask_weather_expert", {"question": EXPERT.question}, agent=EXPERT),),),
                "No umbrella needed: it is sunny and 21°C in Paris.",
            ),
        ),
    ),
    Scenario(
        "dict_result",
        (
            Run(
                "weather_agent",
                "Give me the weather report for Paris.",
                ((Call("get_weather_report", {"city": "Paris"}, result=REPORT),),),
                "Paris: 21°C, sunny, no wind.",
            ),
        ),
    ),
    Scenario(
        "same_tool_twice",
        (
            Run(
                "weather_agent",
                "What is the weather in Paris and in London?",
                ((WEATHER, LONDON_WEATHER),),
                "Paris is sunny at 21°C; London is rainy at 12°C.",
            ),
        ),
    ),
    Scenario("no_content", (Run("weather_agent", QUESTION, ((WEATHER,),), ANSWER),), capture=False),
    Scenario(
        "two_runs_one_trace",
        (
            Run("weather_agent", QUESTION, ((WEATHER,),), ANSWER, conversation_id="conv-9"),
            Run(
                "weather_agent",
                TIME_QUESTION,
                ((TIME,),),
                TIME_ANSWER,
                history=((QUESTION, ANSWER),),
                conversation_id="conv-9",
            ),
        ),
        one_trace=True,
    ),
    Scenario("workflow", (EXPERT, WRITER), workflow="forecast_pipeline"),
    Scenario("remote_agent", (Run("weather_agent", QUESTION, ((WEATHER,),), ANSWER, remote=True),)),
    Scenario(
        "retried_tool",
        (
            Run(
                "weather_agent",
                QUESTION,
                ((BROKEN_WEATHER,), (WEATHER,)),
                "It is sunny and 21°C in Paris (the weather service answered on a second try).",
            ),
        ),
    ),
    Scenario(
        "structured",
        (
            Run(
                "forecaster",
                json.dumps({"city": "Paris", "days": 1}),
                ((WEATHER,),),
                json.dumps({"city": "Paris", "forecast": "sunny", "temp_c": 21}),
            ),
        ),
    ),
    Scenario(
        "delegated",
        (
            Run(
                "trip_planner",
                "Should I pack an umbrella for Paris today?",
                (),
                "No umbrella needed: it is sunny and 21°C in Paris.",
                delegates=(EXPERT,),
            ),
        ),
    ),
)


def truth_runs(run: Run) -> list[dict[str, Any]]:
    """The run and the runs its tools ran, in the order they started, as truth entries."""
    calls = [call for step in run.steps for call in step]
    entry: dict[str, Any] = {
        "agent_name": run.agent,
        "input": run.question,
        "output": run.answer,
        "tool_calls": [
            {
                "name": call.name,
                "arguments": call.arguments,
                "result": None if call.error else call.returned,
                "error": call.error is not None,
            }
            for call in calls
        ],
    }
    if run.conversation_id is not None:
        entry["conversation_id"] = run.conversation_id
    inner = [truth for delegate in run.delegates for truth in truth_runs(delegate)]
    inner += [truth for call in calls if call.agent is not None for truth in truth_runs(call.agent)]
    return [entry, *inner]


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
        for question, answer in run.history:
            history += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
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
        with self.tracer.start_as_current_span(
            f"execute_tool {call.name}",
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            if call.agent is not None:
                self.run(call.agent)
            if call.error is not None:
                failure = RuntimeError(call.error)
                span.set_attribute("error.type", "RuntimeError")
                if self.form.tool_status:
                    span.record_exception(failure)
                    span.set_status(Status(StatusCode.ERROR, call.error))
                if content and self.form.error_as_result:
                    span.set_attribute("gen_ai.tool.call.result", f"Error: {call.error}")
                return {"role": "tool", "tool_call_id": call_id, "content": f"Error: {call.error}"}
            returned = call.returned if isinstance(call.returned, str) else json.dumps(call.returned)
            if content:
                span.set_attribute("gen_ai.tool.call.result", returned)
        return {"role": "tool", "tool_call_id": call_id, "content": returned}


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


def genai_parts(message: Message, as_text: bool = False) -> Message:
    """A chat-completions message in the GenAI messages schema (1.37+)."""
    if message["role"] == "tool":
        part = {"type": "tool_call_response", "id": message["tool_call_id"], "response": message["content"]}
        return {"role": "tool", "parts": [part]}
    parts: list[dict[str, Any]] = []
    if message.get("content"):
        parts.append({"type": "text", "content": message["content"]})
    for request in message.get("tool_calls") or ():
        function = request["function"]
        arguments = function["arguments"] if as_text else json.loads(function["arguments"])
        parts.append(
            {"type": "tool_call", "id": request["id"], "name": function["name"], "arguments": arguments}
        )
    return {"role": message["role"], "parts": parts}


def genai_content(messages: list[Message], outputs: list[Message], as_text: bool = False) -> dict[str, str]:
    """The GenAI content attributes: instructions, input and output messages."""
    finished = []
    for output in outputs:
        parts = genai_parts(output, as_text)
        if output["role"] == "assistant":
            parts["finish_reason"] = "tool_call" if output.get("tool_calls") else "stop"
        finished.append(parts)
    return {
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": INSTRUCTIONS}]),
        "gen_ai.input.messages": json.dumps([genai_parts(message, as_text) for message in messages]),
        "gen_ai.output.messages": json.dumps(finished),
    }


def model_events(
    content: Content, messages: list[Message], output: Message
) -> list[tuple[str, dict[str, Any]]]:
    """The span events that hold a model call's messages in `content`'s form (none for attributes)."""
    chat = [{"role": "system", "content": INSTRUCTIONS}, *messages]
    if content is Content.DETAILS_EVENT:
        return [("gen_ai.client.inference.operation.details", genai_content(messages, [output]))]
    if content is Content.PROMPT_EVENTS:
        completion = {key: value for key, value in output.items() if value is not None}
        return [
            ("gen_ai.content.prompt", {"gen_ai.prompt": json.dumps(chat)}),
            ("gen_ai.content.completion", {"gen_ai.completion": json.dumps([completion])}),
        ]
    if content is not Content.MESSAGE_EVENTS:
        return []
    events: list[tuple[str, dict[str, Any]]] = []
    for message in chat:
        body: dict[str, Any] = {"gen_ai.system": "openai"}
        if message.get("content") is not None:
            body["content"] = message["content"]
        if message.get("tool_calls"):
            body["tool_calls"] = json.dumps(message["tool_calls"])
        if message["role"] == "tool":
            body["id"] = message["tool_call_id"]
        events.append((f"gen_ai.{message['role']}.message", body))
    choice = {key: value for key, value in output.items() if key != "role" and value is not None}
    finish = "tool_calls" if output.get("tool_calls") else "stop"
    events.append(
        (
            "gen_ai.choice",
            {"gen_ai.system": "openai", "index": 0, "finish_reason": finish, "message": json.dumps(choice)},
        )
    )
    return events


def indexed_content(messages: list[Message], output: Message) -> dict[str, Any]:
    """`gen_ai.prompt.{i}.*` and `gen_ai.completion.0.*`, tool calls indexed under them."""
    attributes: dict[str, Any] = {}
    chat = [{"role": "system", "content": INSTRUCTIONS}, *messages]
    for prefix, listed in (("gen_ai.prompt", chat), ("gen_ai.completion", [output])):
        for index, message in enumerate(listed):
            key = f"{prefix}.{index}"
            attributes[f"{key}.role"] = message["role"]
            if message.get("content") is not None:
                attributes[f"{key}.content"] = message["content"]
            if message["role"] == "tool":
                attributes[f"{key}.tool_call_id"] = message["tool_call_id"]
            for number, request in enumerate(message.get("tool_calls") or ()):
                attributes[f"{key}.tool_calls.{number}.id"] = request["id"]
                attributes[f"{key}.tool_calls.{number}.name"] = request["function"]["name"]
                attributes[f"{key}.tool_calls.{number}.arguments"] = request["function"]["arguments"]
            if prefix == "gen_ai.completion":
                attributes[f"{key}.finish_reason"] = "tool_calls" if message.get("tool_calls") else "stop"
    return attributes


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        raise SystemExit("usage: python -m tests.conventions.genai_semconv_matrix OUT_DIR")
    for form, scenario in cases():
        write_scenario(Path(argv[0]) / f"genai-{form.name}", form, scenario)


if __name__ == "__main__":
    main(sys.argv[1:])
