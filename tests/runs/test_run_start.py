"""The one rule for whether a span may start an agent run, as both entry points apply it: the
processor to spans as they start (through the SDK), the sidecar to spans it receives."""

from __future__ import annotations

from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from otel_scorers.conventions import may_start_run
from otel_scorers.sidecar.span_marks import is_run_span

LANGCHAIN_SCOPE = "openinference.instrumentation.langchain"


def otlp_span(name: str, **attributes: str) -> Span:
    span = Span(name=name)
    for key, value in attributes.items():
        span.attributes.append(KeyValue(key=key.replace("__", "."), value={"string_value": value}))
    return span


def test_run_names_and_run_markers_start_runs_other_spans_do_not() -> None:
    assert may_start_run("invoke_agent weather", None)
    assert may_start_run("Agent", {"openinference.span.kind": "AGENT"})
    assert may_start_run("x", {"traceloop.span.kind": "workflow"})
    assert not may_start_run("execute_tool get_weather", {"gen_ai.operation.name": "execute_tool"})
    assert not may_start_run("GET /users", {"http.method": "GET"})


def test_a_scope_that_labels_runs_when_they_end_starts_a_run_only_when_given() -> None:
    # Given: the span is the first of its trace and still starting (no attributes yet).
    assert may_start_run("LangGraph", {}, LANGCHAIN_SCOPE)
    # Not given: a received span has all its attributes, so its scope says nothing more.
    assert not may_start_run("LangGraph", {})
    assert not may_start_run("GET /users", {}, "opentelemetry.instrumentation.requests")


def test_the_sidecar_reads_received_spans_by_the_same_rule() -> None:
    assert is_run_span(otlp_span("invoke_agent weather"))
    assert is_run_span(otlp_span("Agent", openinference__span__kind="AGENT", other="x"))
    assert not is_run_span(otlp_span("get_weather", openinference__span__kind="TOOL"))
    assert not is_run_span(otlp_span("GET /users", http__method="GET"))


def test_a_marker_value_with_a_version_marks_a_run_as_the_value_without_it() -> None:
    # The kind values of docs/conventions.md rule 12: a word, then `.v2`, `_v2`, `-v2` or `/v2`.
    assert may_start_run("Agent", {"openinference.span.kind": "AGENT.v2"})
    assert may_start_run("x", {"traceloop.span.kind": "workflow_v3"})
    assert may_start_run("x", {"gen_ai.operation.name": "invoke_agent.v2"})
    assert may_start_run("x", {"gen_ai.operation.name": "execute_tool.v2"}) is None  # a run's step
    assert may_start_run("x", {"openinference.span.kind": "AGENT.v2 beta"}) is None  # no version
    assert is_run_span(otlp_span("Agent", openinference__span__kind="AGENT-v2"))
    assert not is_run_span(otlp_span("get_weather", openinference__span__kind="TOOL.v2"))
