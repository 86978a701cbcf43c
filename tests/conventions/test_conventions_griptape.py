"""Griptape's own tracing, read by its description (`descriptions/griptape.yaml`): spans under
the application's scope, known by their names (`Agent.run()`, `{Tool}.try_run()`) and a `tags`
list, on traces captured from the real package (tests/fixtures/traces/griptape)."""

from __future__ import annotations

from otel_scorers.conventions import ConventionDescription
from otel_scorers.conventions.described import DescribedConvention
from otel_scorers.span_record import SpanRecord
from tests.runs.fixture_runs import runs_of


def test_an_agents_run_is_found_by_its_spans_names_and_holds_what_the_trace_holds() -> None:
    (run,) = runs_of("griptape", "tool_then_answer")
    assert run.convention == "griptape"
    # Named by the tool's class, as the span is; nothing else of the call is in the trace.
    assert [(call.name, call.state, call.arguments, call.result) for call in run.tool_calls] == [
        ("WeatherTool", "ok", None, None)
    ]
    assert run.agent_name is None and run.input is None and run.output is None
    assert {"agent_name", "input", "output", "tool_arguments", "tool_results"} <= run.missing


def test_a_tool_that_raised_failed_and_an_agent_run_by_a_tool_is_a_run_of_its_own() -> None:
    (run,) = runs_of("griptape", "failing_tool")
    assert [(call.name, call.state) for call in run.tool_calls] == [("BrokenWeatherTool", "error")]
    outer, inner = runs_of("griptape", "nested")
    assert [call.name for call in outer.tool_calls] == ["WeatherAgentTool"]
    assert [call.name for call in inner.tool_calls] == ["WeatherTool"]
    assert inner.parent_span_id is not None


def test_a_when_attribute_value_matches_a_list_attribute_that_holds_it() -> None:
    reader = DescribedConvention(
        ConventionDescription.model_validate(
            {
                "name": "tagged",
                "marker_attributes": ["tags"],
                "run": {},
                "tool": {"when": {"attributes": {"tags": "Tool.run()"}}},
            }
        )
    )

    def span(tags: object) -> SpanRecord:
        return SpanRecord(trace_id=1, span_id=2, parent_span_id=None, name="x", attributes={"tags": tags})

    assert reader.role(span(["Tool.run()"])) == "tool"
    assert reader.role(span(("Other", "Tool.run()"))) == "tool"
    assert reader.role(span(["PromptDriver.run()"])) is None
