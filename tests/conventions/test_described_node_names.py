"""A described instrumentation that names no agent span and writes `gen_ai.agent.name` for the
graph node a span ran in (as Fiddler's LangGraph instrumentation does), its model calls' messages
in the GenAI conventions' shape (`[{role, parts}]`).

Written through the real OpenTelemetry SDK: the run is the span at the top of the trace around
its model call, named as its span is when the description says `name_keys: false`; its request
and answer are its model call's messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers import conventions
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanRecord, from_readable_span

SCOPE = "acme.graphs"


def description(**run: Any) -> dict[str, Any]:
    return {
        "name": "acme-graphs",
        "scope": SCOPE,
        "run": {"agent_name": {"span": "name"}, **run},
        "model": {
            "when": {"attributes": {"acme.type": "llm"}},
            "input": "gen_ai.input.messages",
            "output": "gen_ai.output.messages",
        },
    }


def graph_trace() -> list[SpanRecord]:
    """A graph `forecaster` whose one node, `model`, calls the model once."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer(SCOPE)
    node = {"acme.type": "chain", "gen_ai.agent.name": "model"}
    request = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny, 21°C."}]}]
    llm = {
        "acme.type": "llm",
        "gen_ai.agent.name": "model",
        "gen_ai.input.messages": json.dumps(request),
        "gen_ai.output.messages": json.dumps(answer),
    }
    with (
        tracer.start_as_current_span("forecaster", attributes=node),
        tracer.start_as_current_span("model", attributes=node),
        tracer.start_as_current_span("ChatModel", attributes=llm),
    ):
        pass
    return [from_readable_span(span) for span in exporter.get_finished_spans()]


@pytest.fixture(autouse=True)
def no_descriptions_after() -> Iterator[None]:
    yield
    conventions.use_descriptions(())


def test_a_run_named_by_its_span_keeps_that_name_when_the_name_keys_name_a_node() -> None:
    conventions.use_descriptions([description(name_keys=False)])
    (run,) = build_runs(graph_trace())
    assert run.agent_name == "forecaster"


def test_the_name_keys_name_a_run_named_by_its_span_by_default() -> None:
    conventions.use_descriptions([description()])
    (run,) = build_runs(graph_trace())
    assert run.agent_name == "model"


def test_model_messages_in_the_genai_shape_give_the_run_its_request_and_answer() -> None:
    conventions.use_descriptions([description()])
    (run,) = build_runs(graph_trace())
    assert (run.input, run.output) == ("Weather in Paris?", "Sunny, 21°C.")
    assert not run.missing
