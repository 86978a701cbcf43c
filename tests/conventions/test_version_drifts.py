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


#: Corpora whose reader reads the request from a key it falls back to when its own is absent
#: (OpenInference's CrewAI events: the whole task prompt), or names the agent by a path inside
#: the run's output (MLflow's LlamaIndex agent): the bare keys hold what moved.
BARE_KEY_CORPORA = ("crewai-openinference-events", "mlflow-llamaindex")


@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("drift", sorted(DRIFTS))
def test_a_drifted_corpus_reads_as_the_plain_one(drift: str, corpus: str) -> None:
    reads_as_plain(drift, corpus)


@pytest.mark.parametrize("corpus", BARE_KEY_CORPORA)
def test_bare_keys_are_read_before_a_fallback_and_inside_a_description_s_paths(corpus: str) -> None:
    reads_as_plain("bare-keys", corpus)


def reads_as_plain(drift: str, corpus: str) -> None:
    moved = 0
    for truth_path in sorted((TRACES / corpus).glob("*.truth.json")):
        plain = plain_tally(truth_path)
        drifted = scenario_tally(truth_path, corpus, drifts=(drift,))
        moved += drifted.moved
        scenario = truth_path.name.removesuffix(".truth.json")
        assert (drifted.right, drifted.phantom) == (plain.right, 0), (scenario, drifted.findings)
    assert moved, f"the drift {drift} moved nothing in {corpus}"
