"""Spans the GenAI reader claims by `gen_ai.operation.name` whose vocabulary names its operations
as the GenAI conventions do and keeps the rest in keys of its own (any-agent's `call_llm`,
`gen_ai.output`), read with their description unused: withheld, or its scope renamed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from otel_scorers import conventions
from tests.conventions.test_fixture_runs import assert_runs_match
from tests.runs.fixture_runs import runs_in
from tests.runs.test_framework_facts_any_instrumentation import TRACES, renamed_scope, rewritten

SCENARIOS = ["tool_then_answer", "two_tools", "multi_turn", "failing_tool", "no_tool", "agent_as_tool"]


@pytest.fixture
def withheld() -> Iterator[None]:
    conventions.use_descriptions((), withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
    yield
    conventions.use_descriptions(())


def assert_read_as_written(scenario: str, path: Path) -> None:
    truth = json.loads((TRACES / "any-agent" / f"{scenario}.truth.json").read_text())
    runs = runs_in(path)
    assert runs and {run.convention for run in runs} == {"genai"}
    assert_runs_match(truth, "any-agent", runs)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_an_operation_named_as_a_model_call_and_the_namespaces_output_key_are_read_without_a_description(
    scenario: str, withheld: None
) -> None:
    # any-agent's `call_llm` is a model call by its operation's name (a kind of model call, as
    # the inference reads kinds); its answer, and a tool's result, in `gen_ai.output`: the GenAI
    # namespace's own output key, as a vocabulary's `{prefix}output` beside its kind key.
    assert_read_as_written(scenario, TRACES / "any-agent" / f"{scenario}.json")


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_same_spans_are_read_alike_under_a_renamed_tracer(scenario: str, tmp_path: Path) -> None:
    assert_read_as_written(scenario, rewritten("any-agent", scenario, renamed_scope("acme.tracer"), tmp_path))


def test_a_tool_span_shares_a_tracer_and_a_name_with_another_instrumentations_yet_keeps_its_keys(
    tmp_path: Path,
) -> None:
    # AG2's `execute_tool get_weather` without content carries no argument key; any-agent's, under
    # the same tracer's name, has `gen_ai.tool.args`: each span is read by the keys it carries.
    runs_in(rewritten("ag2", "no_content", renamed_scope("acme.tracer"), tmp_path))
    assert_read_as_written(
        "tool_then_answer", rewritten("any-agent", "tool_then_answer", renamed_scope("acme.tracer"), tmp_path)
    )
