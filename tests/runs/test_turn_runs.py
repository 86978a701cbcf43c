"""Runs that are turns of one run (`runs/turn_runs.py`): an instrumentation writing one span per
turn of an agent's loop, each marked as the agent's, side by side under the run's span (Monocle's
over the OpenAI Agents SDK, read without its run clauses or its description). The turns are one
run, as the generator's truth says: never one scored run per turn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.fidelity import scenario_tally
from otel_scorers import conventions

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
CORPUS = "monocle-openai-agents"


@pytest.fixture(autouse=True)
def _shipped_after() -> Iterator[None]:
    yield
    conventions.use_descriptions(())


def _scenarios() -> list[Path]:
    return sorted((TRACES / CORPUS).glob("*.truth.json"))


@pytest.mark.parametrize("truth_path", _scenarios(), ids=lambda path: path.name.split(".")[0])
def test_turns_read_without_the_run_clauses_are_one_run(truth_path: Path) -> None:
    conventions.use_descriptions((), runs_withheld=["monocle"])
    tally = scenario_tally(truth_path, CORPUS)
    assert (tally.right, tally.phantom) == (tally.truth, 0), tally.findings


@pytest.mark.parametrize("truth_path", _scenarios(), ids=lambda path: path.name.split(".")[0])
def test_turns_read_by_the_vocabulary_the_trace_shows_are_one_run(truth_path: Path) -> None:
    conventions.use_descriptions((), withheld=["monocle"])
    tally = scenario_tally(truth_path, CORPUS)
    assert (tally.right, tally.phantom) == (tally.truth, 0), tally.findings


def test_agents_invoked_in_turn_are_no_turns_of_one_run() -> None:
    # Sibling agents each holding several model calls (an agent, then the one it handed over to)
    # are whole invocations, not turns: the handoff between them is read as before.
    conventions.use_descriptions((), withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
    truth_path = TRACES / "traceai-openai-agents" / "handoff_after_tool.truth.json"
    tally = scenario_tally(truth_path, "traceai-openai-agents")
    assert (tally.right, tally.phantom) == (tally.truth, 0), tally.findings
