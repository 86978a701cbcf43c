"""Real traces after a version drift read as the traces themselves do.

The next release or another runtime of a framework keeps a fact slightly elsewhere than where
its reader looks: a kind value with a version suffix, a tool's result wrapped in an object, a
tool's input and output only in the generic keys, a call recorded as a function's arguments, a
run's or a tool's input and output under bare keys. `bench/drifts.py` applies each to the real
fixtures (moving what the plain reading found, losing nothing), and the runs must still match
the generators' truth, scenario by scenario, with no phantom run.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from bench.drifts import DRIFTS
from bench.fidelity import Tally, scenario_tally
from tests.conventions.test_fixture_runs import TRACES

#: Corpora of several readers (the Vercel AI SDK's, a shipped description, the GenAI
#: conventions', Mastra's, OpenLLMetry's over LlamaIndex with its handoffs, Langfuse's) whose
#: plain traces read right.
CORPORA = ("vercel-ai", "mlflow", "openai-v2", "mastra-exporter", "otel-llamaindex", "langfuse")


@cache
def plain_tally(truth_path: Path) -> Tally:
    return scenario_tally(truth_path, truth_path.parent.name)


@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("drift", sorted(DRIFTS))
def test_a_drifted_corpus_reads_as_the_plain_one(drift: str, corpus: str) -> None:
    moved = 0
    for truth_path in sorted((TRACES / corpus).glob("*.truth.json")):
        plain = plain_tally(truth_path)
        drifted = scenario_tally(truth_path, corpus, drifts=(drift,))
        moved += drifted.moved
        scenario = truth_path.name.removesuffix(".truth.json")
        assert (drifted.right, drifted.phantom) == (plain.right, 0), (scenario, drifted.findings)
    assert moved, f"the drift {drift} moved nothing in {corpus}"
