"""A span's framework is decided once per instrumentation scope (`conventions/frameworks.py`):
the framework remembered for a scope must answer what working it out anew answers, for every
span of every framework's traces, under their own scopes and under a scope no reader knows, and
past the scopes remembered a new scope is still named."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from otel_scorers.conventions import frameworks
from otel_scorers.conventions.frameworks import FRAMEWORKS, Framework, framework_name, framework_of
from otel_scorers.conventions.tool_listings import lists_tools
from otel_scorers.model import ToolCall
from otel_scorers.runs.otlp_files import InputProblem, read_spans
from otel_scorers.span_record import SpanRecord

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


def worked_out_anew(span: SpanRecord) -> Framework | None:
    """The framework of `span` as the module's docstring states it, nothing remembered."""
    named = FRAMEWORKS.get(framework_name(span.scope)) if span.scope else None
    if named is not None:
        return named
    return next((framework for framework in FRAMEWORKS.values() if framework.marks(span)), None)


def fixture_spans() -> list[SpanRecord]:
    problems: list[InputProblem] = []
    spans = [
        span
        for path in sorted(TRACES.glob("*/*.json"))
        if not path.name.endswith(".truth.json")
        for span in read_spans(path, problems)
    ]
    assert not problems and len(spans) > 1000
    return [*spans, *(replace(span, scope="acme.tracer") for span in spans)]


def test_every_fixture_spans_framework_is_the_one_worked_out_anew() -> None:
    spans = fixture_spans()
    for _ in range(2):  # the second pass answers from the scopes remembered by the first
        for span in spans:
            assert framework_of(span) is worked_out_anew(span), (span.scope, span.name)


def test_a_listing_is_known_by_its_scope_framework_without_looking_for_marks() -> None:
    # A framework's marks are looked for only on a span named as a listing is; no framework
    # known by its marks lists tools.
    assert not any(framework.listing_tools for framework in FRAMEWORKS.values() if framework.mark_keys)
    listing = SpanRecord(1, 2, None, "mcp_list_tools", scope="openinference.instrumentation.openai_agents")
    renamed = replace(listing, scope="acme.tracer")

    def read_call(span: SpanRecord) -> ToolCall:
        return ToolCall(name=span.name)

    assert lists_tools(listing, read_call)
    # Under a scope naming no framework, the listing is known by its name and empty arguments.
    assert lists_tools(renamed, read_call)
    ran = replace(renamed, name="get_weather")
    assert not lists_tools(ran, read_call)


def test_past_the_scopes_remembered_a_new_scope_still_names_its_framework() -> None:
    remembered = dict(frameworks._scope_frameworks)
    try:
        for number in range(frameworks._MAX_REMEMBERED_SCOPES + 10):
            framework_of(SpanRecord(1, 2, None, "step", scope=f"acme.tracer.{number}"))
        assert len(frameworks._scope_frameworks) == frameworks._MAX_REMEMBERED_SCOPES
        unseen = SpanRecord(1, 2, None, "step", scope="acme.instrumentation.crewai")
        assert framework_of(unseen) is FRAMEWORKS["crewai"]
        assert framework_of(unseen) is FRAMEWORKS["crewai"]
        assert "acme.instrumentation.crewai" not in frameworks._scope_frameworks
    finally:
        frameworks._scope_frameworks.clear()
        frameworks._scope_frameworks.update(remembered)
