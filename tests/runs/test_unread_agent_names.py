"""A run whose reader names no agent (a described tracer's run clauses withheld, bench/fidelity.py
`--without-runs`: its run found by the rules every reader shares) is named by the keys and
span-name forms every reader shares on its span; a conversation named after its turns is not."""

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


@pytest.mark.parametrize("corpus", ["any-agent", "sentry-langchainjs"])
def test_a_run_its_reader_names_not_is_named_by_the_shared_keys(corpus: str) -> None:
    conventions.use_descriptions((), runs_withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
    for truth_path in sorted((TRACES / corpus).glob("*.truth.json")):
        tally = scenario_tally(truth_path, corpus)
        assert (tally.right, tally.phantom) == (tally.truth, 0), tally.findings


def test_a_conversation_is_named_after_its_turns_not_its_span() -> None:
    # AG2's conversation span names the agent that opened it (`gen_ai.agent.name = user`): the
    # run is the first turn's agent's.
    for truth_path in sorted((TRACES / "ag2-legacy").glob("*.truth.json")):
        tally = scenario_tally(truth_path, "ag2-legacy")
        assert (tally.right, tally.phantom) == (tally.truth, 0), tally.findings


@pytest.mark.parametrize("corpus", ["langsmith-langchain", "langsmith015-langchain"])
def test_a_graph_a_tool_ran_is_named_as_its_span_that_recorded_its_request(corpus: str) -> None:
    # LangSmith's span of a LangGraph graph a tool runs (`LangGraph`), found by its place, its
    # request in the GenAI key every reader reads for a run's (`gen_ai.prompt`).
    conventions.use_descriptions((), runs_withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
    tally = scenario_tally(TRACES / corpus / "agent_in_tool.truth.json", corpus)
    assert (tally.right, tally.phantom) == (tally.truth, 0), tally.findings
