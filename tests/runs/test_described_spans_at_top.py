"""A described tracer over a framework its description was not written from, read without its run
clauses (`use_descriptions(runs_withheld=)`, bench/fidelity.py `--without-runs`), whose vocabulary
marks no agent: its spans read by the vocabulary they show, the run is the root span around the
model calls (`runs/unrun_descriptions.py`)."""

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


@pytest.mark.parametrize("corpus", ["langsmith-openai", "langsmith-openaijs", "promptflow-openai"])
def test_a_kind_key_marking_no_agent_leaves_the_run_to_the_root_around_the_calls(corpus: str) -> None:
    # LangSmith's run types (`chain`, `llm`, `tool`) and Prompt flow's (`Function` for a tool and
    # the application's function alike, `LLM`) mark no agent: the root span around model calls no
    # run holds is the run, named as its span is, an agent a tool ran found by its place and read
    # by the same vocabulary.
    conventions.use_descriptions((), runs_withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
    for truth_path in sorted((TRACES / corpus).glob("*.truth.json")):
        tally = scenario_tally(truth_path, corpus)
        assert (tally.right, tally.phantom) == (tally.truth, 0), tally.findings
