"""A described tracer over a framework its description was not written from, read without its run
clauses (`use_descriptions(runs_withheld=)`, bench/fidelity.py `--without-runs`), whose spans show
no vocabulary marking a run (Laminar's `lmnr.span.type`: `DEFAULT`, `LLM`, `TOOL`): the root span
its reader claimed around the model calls is the run, read by the rules every reader shares
(`runs/described_tops.py`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.fidelity import scenario_tally
from otel_scorers import conventions

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


@pytest.fixture(autouse=True)
def _shipped_after() -> Iterator[None]:
    yield
    conventions.use_descriptions(())


@pytest.mark.parametrize(
    "scenario",
    ["tool_then_answer", "two_tools", "multi_turn", "two_runs", "failing_tool", "no_tool", "stream"],
)
def test_the_root_around_the_model_calls_is_the_run_named_as_its_span_says(scenario: str) -> None:
    # Mastra's `@mastra/laminar` exporter: `agent run: 'weather-agent'` around `step: 0` model calls
    # (which record no answer: no chain of calls joins them), its request and answer in
    # `lmnr.span.input` / `lmnr.span.output`.
    conventions.use_descriptions((), runs_withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
    tally = scenario_tally(TRACES / "mastra-laminar" / f"{scenario}.truth.json", "mastra-laminar")
    assert (tally.right, tally.phantom) == (tally.truth, 0), tally.findings


def test_an_agent_that_called_a_tool_running_another_is_named_as_its_span_is() -> None:
    # Laminar's `observe()` spans: `trip_planner` around the calls, its tool running `weather_agent`;
    # neither span names an agent by a key, each recorded its request as `lmnr.span.input`.
    conventions.use_descriptions((), runs_withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
    tally = scenario_tally(TRACES / "lmnr-openaijs" / "nested.truth.json", "lmnr-openaijs")
    assert (tally.right, tally.phantom) == (tally.truth, 0), tally.findings
