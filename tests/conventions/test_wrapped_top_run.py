"""A trace's root that records nothing around one span of its reader is that span's wrapper.

An instrumentation that marks no agent (a description without the run's `when`) has its run found
at the top of the trace (`runs/top_runs.py`). When the application opens a span of its own around
one call of the agent (LangWatch's `langwatch.trace()`), that root records neither a request nor
an answer: the one span inside it, which records them, is the unit of work, named as it is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer

from otel_scorers import conventions
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import from_readable_span

#: A vocabulary whose kinds name no agent: its runs are found by their place.
DESCRIPTION = {
    "name": "kinds",
    "scope": "acme.kinds",
    "run": {
        "agent_name": {"span": "name"},
        "input": {"attribute": "acme.input", "path": "text"},
        "output": {"attribute": "acme.output", "path": "text"},
    },
    "tool": {
        "when": {"attributes": {"acme.kind": "tool"}},
        "name": {"span": "name"},
        "result": "acme.output",
    },
    "model": {"when": {"attributes": {"acme.kind": "llm"}}, "model": "acme.model"},
}


@pytest.fixture(autouse=True)
def described() -> Iterator[None]:
    conventions.use_descriptions([DESCRIPTION])
    yield
    conventions.use_descriptions(())


def traced(write: Callable[[Tracer], None]) -> list[tuple[str, str | None, str | None, list[str]]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    write(provider.get_tracer("acme.kinds"))
    runs = build_runs([from_readable_span(span) for span in exporter.get_finished_spans()])
    return [(run.agent_name, run.input, run.output, [call.name for call in run.tool_calls]) for run in runs]


def chain(tracer: Tracer, name: str, *, recorded: bool, steps: int = 2) -> None:
    """A graph of `steps` node spans (the first a tool call), each around a model call."""
    attributes = {"acme.kind": "chain"}
    if recorded:
        attributes["acme.input"] = json.dumps({"text": "Weather in Paris?"})
    with tracer.start_as_current_span(name, attributes=attributes) as span:
        for step in range(steps):
            with tracer.start_as_current_span("node", attributes={"acme.kind": "chain"}):
                with tracer.start_as_current_span(
                    "llm", attributes={"acme.kind": "llm", "acme.model": "small"}
                ):
                    pass
                if step == 0 and steps > 1:
                    attributes = {"acme.kind": "tool", "acme.output": "Sunny"}
                    with tracer.start_as_current_span("get_weather", attributes=attributes):
                        pass
        if recorded:
            span.set_attribute("acme.output", json.dumps({"text": "It is sunny."}))


def test_the_one_span_under_a_root_recording_nothing_is_the_run() -> None:
    def write(tracer: Tracer) -> None:
        with tracer.start_as_current_span("span", attributes={"acme.kind": "span"}):
            chain(tracer, "weather_agent", recorded=True)

    assert traced(write) == [("weather_agent", "Weather in Paris?", "It is sunny.", ["get_weather"])]


def test_a_root_recording_nothing_around_a_span_recording_nothing_is_the_run() -> None:
    # A graph whose one node records no more than the graph does: the graph is the unit of work.
    assert traced(lambda tracer: chain(tracer, "weather_agent", recorded=False, steps=1)) == [
        ("weather_agent", None, None, [])
    ]


def test_a_root_recording_nothing_around_two_spans_is_the_run() -> None:
    def write(tracer: Tracer) -> None:
        with tracer.start_as_current_span("session", attributes={"acme.kind": "span"}):
            chain(tracer, "weather_agent", recorded=True)
            chain(tracer, "weather_agent", recorded=True)

    ((name, _, _, calls),) = traced(write)
    assert (name, calls) == ("session", ["get_weather", "get_weather"])
