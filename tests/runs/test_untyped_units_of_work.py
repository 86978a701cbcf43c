"""Spans an instrumentation writes without its kind key: the application's own unit of work at the
top of a trace, in a vocabulary whose description names runs by a kind (Laminar's TypeScript SDK
writes its default kind, `DEFAULT`, as no `lmnr.span.type` at all), and what such a unit of work
records as its request: the list of the function's arguments. Read on traces captured from the
real package (tests/fixtures/traces/lmnr-openaijs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from otel_scorers.runs.run_text import reduced_text
from tests.runs.fixture_runs import attribute_values, runs_in
from tests.runs.test_framework_facts_any_instrumentation import TRACES, rewritten, view
from tests.runs.test_inferred_vocabulary_fixtures import assert_read_as_written, rebuilt

SCENARIOS = ["tool_then_answer", "two_tools", "multi_turn", "two_runs", "nested", "failing_tool", "no_tool"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_root_span_the_kind_key_leaves_untyped_is_the_run_of_the_model_calls_under_it(
    scenario: str,
) -> None:
    # `observe()` around the tool loop: a root span with no `lmnr.span.type`, its model calls
    # OpenLLMetry's, its tools `TOOL` spans; named as its span is.
    runs = rebuilt("lmnr-openaijs", scenario)
    assert runs and {run.convention for run in runs} == {"laminar"}
    assert_read_as_written("lmnr-openaijs", scenario, runs)


def test_the_agent_span_carries_no_kind_key() -> None:
    # What the rule reads from: the captured agent span holds its record, not its kind.
    assert attribute_values("lmnr-openaijs", "no_tool", "weather_agent", "lmnr.span.input") == [
        '["Say hello in French."]'
    ]
    assert not _has("no_tool", "weather_agent", "lmnr.span.type")


def test_a_request_recorded_as_a_list_of_one_text_is_that_text() -> None:
    assert reduced_text('["What is the weather in Paris?"]', "input") == "What is the weather in Paris?"
    # Two arguments, or an answer, are kept as they are.
    assert reduced_text('["Paris", "London"]', "input") == '["Paris", "London"]'
    assert reduced_text('["Paris"]', "output") == '["Paris"]'


def _has(scenario: str, span_name: str, key: str) -> bool:
    try:
        attribute_values("lmnr-openaijs", scenario, span_name, key)
    except AssertionError:
        return False
    return True


def renamed_laminar_scope(scope: dict[str, Any], span: dict[str, Any]) -> None:
    if scope.get("name") == "lmnr.tracer":
        scope["name"] = "acme.tracer"


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_under_a_renamed_tracer_the_untyped_root_is_laminars_by_its_record_of_its_input(
    scenario: str, tmp_path: Path
) -> None:
    seen = [view(run) for run in runs_in(TRACES / "lmnr-openaijs" / f"{scenario}.json")]
    renamed = rewritten("lmnr-openaijs", scenario, renamed_laminar_scope, tmp_path)
    assert [view(run) for run in runs_in(renamed)] == seen
