"""A forked vocabulary (`bench/drifts.py`'s `FORKS`) keeps a known instrumentation's shape under a
namespace no reader knows: on the real fixtures, every key of the reader's namespace on a span
of its reader moves under `acme`, the rest of each key and every value kept, so the facts the
generators' truth holds are all still in the trace."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench.drifts import FORK, FORKS, drifted
from bench.fidelity import scenario_tally
from otel_scorers import conventions
from tests.conventions.test_fixture_runs import TRACES

#: Corpora of the largest families: OpenInference's (generic and indexed keys unprefixed),
#: OpenLLMetry's (`traceloop.*`, `llm.*`, `gen_ai.*`), the GenAI conventions' (`gen_ai.*`).
CASES = (
    ("smolagents", "openinference.span.kind", "input.value"),
    ("llamaindex-openllmetry", "traceloop.span.kind", "traceloop.entity.input"),
    ("openai-v2", "gen_ai.operation.name", "gen_ai.input.messages"),
)


def spans(path: Path) -> list[dict[str, Any]]:
    document = json.loads(path.read_text())
    return [
        span
        for resource_spans in document["resourceSpans"]
        for scope_spans in resource_spans["scopeSpans"]
        for span in scope_spans.get("spans", [])
    ]


def values(span: dict[str, Any]) -> Counter[str]:
    return Counter(json.dumps(item["value"], sort_keys=True) for item in span.get("attributes", []))


def keys(path: Path) -> set[str]:
    return {item["key"] for span in spans(path) for item in span.get("attributes", [])}


@pytest.mark.parametrize("drift", sorted(FORKS))
@pytest.mark.parametrize(("corpus", "kind_key", "input_key"), CASES)
def test_a_fork_moves_the_reader_s_keys_under_an_unknown_namespace_keeping_every_value(
    drift: str, corpus: str, kind_key: str, input_key: str, tmp_path: Path
) -> None:
    trace = sorted((TRACES / corpus).glob("*.truth.json"))[0].with_suffix("").with_suffix(".json")
    forked, moved = drifted(trace, drift, tmp_path)
    renames_genai = drift == "forked-genai" or not kind_key.startswith("gen_ai.")
    assert bool(moved) == renames_genai
    before, after = spans(trace), spans(forked)
    assert [values(span) for span in before] == [values(span) for span in after]
    plain_keys, forked_keys = keys(trace), keys(forked)
    assert kind_key in plain_keys and input_key in plain_keys
    if renames_genai:
        assert kind_key not in forked_keys and input_key not in forked_keys
        assert any(
            key.startswith(FORK + ".") and key.endswith(kind_key.split(".", 1)[1]) for key in forked_keys
        )
    else:
        assert forked_keys == plain_keys


#: Corpora of the largest families whose forks read as their plain traces, scope unknown too:
#: OpenInference's (smolagents, DSPy, LangGraph, BeeAI) and OpenLLMetry's (OpenAI Agents, Agno).
READ_AS_PLAIN = (
    "smolagents",
    "dspy-openinference",
    "langgraph-openinference",
    "beeai-openinference",
    "openllmetry052-openai-agents",
    "agno-openllmetry",
)


@pytest.mark.parametrize("corpus", READ_AS_PLAIN)
def test_a_fork_of_a_known_vocabulary_reads_as_the_known_one(corpus: str) -> None:
    for truth_path in sorted((TRACES / corpus).glob("*.truth.json")):
        plain = scenario_tally(truth_path, corpus)
        forked = scenario_tally(truth_path, corpus, rename_scope="", drifts=("forked-keys",))
        scenario = truth_path.name.removesuffix(".truth.json")
        assert forked.moved, scenario
        assert (forked.right, forked.phantom) == (plain.right, 0), (scenario, forked.findings)


def test_a_key_of_one_word_after_an_unknown_namespace_is_no_fork() -> None:
    # `error.type` is OpenTelemetry's, not a fork of `span.type` or `entity.type`.
    assert conventions.forks_of({"error.type": "ValueError"}) == ()
    targets = {fork.target() for fork in conventions.forks_of({"acme.span.kind": "AGENT"})}
    assert frozenset({"openinference"}) in targets and frozenset({"traceloop"}) in targets
    vendor = conventions.forks_of({"acme.gen_ai.operation.name": "invoke_agent"})
    assert any(fork.prefix == "acme." and fork.namespace == "" for fork in vendor)
