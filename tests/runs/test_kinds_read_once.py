"""What run building decides once per kind of span (`kind_versions.of_kind`) answers what reading each
span would: a span of a remembered kind whose kind value carries a version, or that a processor
relabelled, is still read as such, whichever span of its kind came first."""

from __future__ import annotations

from otel_scorers import conventions
from otel_scorers.gen_ai_names import GEN_AI_OPERATION_NAME
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanRecord

LANGCHAIN_SCOPE = "opentelemetry.instrumentation.langchain"  # OpenLLMetry's LangChain instrumentation

#: Genkit's own keys under a tracer of another name: read by its description's second entry,
#: among the readers asked once per kind of span.
_SCOPE = "acme.tracer"


def _flow_trace(trace_id: int, flow: str, subtype: str) -> list[SpanRecord]:
    """A Genkit flow (the run) around a model call, the flow's subtype as given."""

    def action(span_id: int, parent: int | None, name: str, kind: str) -> SpanRecord:
        attributes = {
            "genkit:type": "action",
            "genkit:metadata:subtype": kind,
            "genkit:name": name,
            "genkit:input": '"What is the weather?"',
            "genkit:output": '"Sunny."',
        }
        return SpanRecord(
            trace_id, span_id, parent, name, start_ns=span_id, end_ns=10, attributes=attributes, scope=_SCOPE
        )

    return [action(1, None, flow, subtype), action(2, 1, "gemini-2.0-flash", "model")]


def _run_names(spans: list[SpanRecord]) -> list[str | None]:
    return [run.agent_name for run in build_runs(spans)]


def test_a_versioned_kind_value_is_read_after_a_plain_span_of_the_same_kind() -> None:
    # Genkit Go writes `tool.v2`; a flow written so is the same kind of work (`kind_versions`).
    assert _run_names(_flow_trace(1, "weatherFlow", "flow")) == ["weatherFlow"]
    assert _run_names(_flow_trace(2, "weatherFlow", "flow.v2")) == ["weatherFlow"]
    assert _run_names(_flow_trace(3, "weatherFlow", "flow")) == ["weatherFlow"]


def test_a_plain_kind_value_is_read_after_a_versioned_span_of_the_same_kind() -> None:
    assert _run_names(_flow_trace(4, "tripFlow", "flow.v2")) == ["tripFlow"]
    assert _run_names(_flow_trace(5, "tripFlow", "flow")) == ["tripFlow"]


def test_a_remembered_kind_says_which_checks_its_spans_need() -> None:
    def kind(name: str, scope: str, **attributes: str) -> tuple[tuple[str, ...], bool]:
        span = SpanRecord(
            1, 2, None, name, attributes={GEN_AI_OPERATION_NAME: "chat", **attributes}, scope=scope
        )
        for _ in range(2):  # the second time from the kind remembered
            found, keys = conventions.detect_with_kind_keys(span)
        assert found is not None and found.name == "genai" and keys is not None
        return keys.own, keys.relabelled

    # The compared value is part of the kind: without a version, no span of it is read again.
    assert kind("chat gpt-4o", "acme.genai") == ((), False)
    assert kind("chat.v2 gpt-4o", "acme.genai", **{GEN_AI_OPERATION_NAME: "chat.v2"}) == (
        (GEN_AI_OPERATION_NAME,),
        False,
    )
    # A kind value outside the kind is read on each span.
    assert kind("chat gpt-4o", "acme.genai", **{"acme.span.kind": "llm"}) == (("acme.span.kind",), False)
    # OpenLLMetry's LangChain span whose kind key a processor rewrote, its name keeping the kind.
    assert kind("research.workflow", LANGCHAIN_SCOPE) == ((), True)
    assert kind("research", LANGCHAIN_SCOPE) == ((), False)
