"""A forked vocabulary (`bench/drifts.py`'s `FORKS`) keeps a known instrumentation's shape under a
namespace no reader knows: on the real fixtures, every key of the reader's namespace on a span
of its reader moves under `acme`, the rest of each key and every value kept, so the facts the
generators' truth holds are all still in the trace."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from bench.drifts import FORK, FORKS, drifted
from bench.fidelity import scenario_tally
from otel_scorers import conventions
from otel_scorers.runs import span_roles
from otel_scorers.runs.otlp_files import read_spans
from otel_scorers.span_record import SpanEvent, SpanRecord
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


def test_a_trace_whose_forked_spans_no_reader_gives_a_role_is_not_read_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # OpenLIT's MCP spans write `mcp.operation.name` as GenAI's `gen_ai.operation.name` under a
    # namespace of their own, with values (`tools/list`) no GenAI reader gives a role: the fork
    # is looked at on the forked spans, and the trace is never read again as its fork's.
    reread: list[int] = []
    read_again = span_roles._unforked

    def counted(spans: list[SpanRecord]) -> span_roles.SpanRoles:
        reread.append(len(spans))
        return read_again(spans)

    monkeypatch.setattr(span_roles, "_unforked", counted)
    forked_traces = 0
    for path in sorted((TRACES / "openlit-mcp").glob("*.json")):
        if path.name.endswith(".truth.json"):
            continue
        traces: dict[int, list[SpanRecord]] = {}
        for span in read_spans(path, []):
            traces.setdefault(span.trace_id, []).append(span)
        for spans in traces.values():
            found = span_roles.span_roles(spans)
            if not any(role == "run" for _, role in found.roles.values()):
                forked_traces += any(conventions.forks_of(span.attributes) for span in spans)
    assert forked_traces > 0
    assert reread == []


def test_a_span_read_as_a_fork_s_keeps_every_field_but_its_keys() -> None:
    span = SpanRecord(
        trace_id=1,
        span_id=2,
        parent_span_id=3,
        name="invoke_agent helper",
        kind="client",
        start_ns=4,
        end_ns=5,
        status="error",
        status_message="boom",
        attributes={"acme.gen_ai.operation.name": "invoke_agent"},
        events=(SpanEvent("event", 6),),
        resource={"service.name": "agent"},
        scope="acme.tracer",
    )
    fork = next(f for f in conventions.forks_of(span.attributes) if f.prefix == "acme.")
    read = fork.unforked(span)
    assert read.attributes == {**span.attributes, "gen_ai.operation.name": "invoke_agent"}
    for field in fields(SpanRecord):
        if field.name != "attributes":
            assert getattr(read, field.name) == getattr(span, field.name), field.name
