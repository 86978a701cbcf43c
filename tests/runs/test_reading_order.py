"""A trace is read the same whatever traces the process read before it: the runs a user's scores
come from never depend on the order traces arrive in. Each trace of a corpus, in a file of its
own, is read alone in a fresh state, then with the others in the order captured and in the
reverse order, and every reading of it gives the same runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from otel_scorers import conventions
from otel_scorers.model import AgentRun
from otel_scorers.runs.otlp_files import InputProblem, runs_from_files

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"


@pytest.fixture(autouse=True)
def fresh_readers() -> Iterator[None]:
    conventions.use_descriptions(())
    yield
    conventions.use_descriptions(())


def traces_apart(corpora: tuple[str, ...], into: Path) -> list[Path]:
    """Each trace of the corpora's scenarios, in the order captured, as an OTLP/JSON file of its own."""
    files: list[Path] = []
    for scenario in sorted(path for corpus in corpora for path in (TRACES / corpus).glob("*.json")):
        if scenario.name.endswith(".truth.json"):
            continue
        document = json.loads(scenario.read_text())
        trace_ids = dict.fromkeys(
            span["traceId"]
            for resource in document["resourceSpans"]
            for scope in resource["scopeSpans"]
            for span in scope["spans"]
        )
        for trace_id in trace_ids:
            path = into / f"{scenario.parent.name}-{scenario.stem}-{trace_id}.json"
            path.write_text(json.dumps(_only_trace(document, trace_id)))
            files.append(path)
    return files


def _only_trace(document: dict[str, Any], trace_id: str) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                **resource,
                "scopeSpans": [
                    {**scope, "spans": [span for span in scope["spans"] if span["traceId"] == trace_id]}
                    for scope in resource["scopeSpans"]
                ],
            }
            for resource in document["resourceSpans"]
        ]
    }


def read(path: Path) -> list[AgentRun]:
    problems: list[InputProblem] = []
    runs = sorted(runs_from_files([path], problems), key=lambda run: run.start_ns)
    assert not problems, problems
    return runs


@pytest.mark.parametrize("withheld", [(), conventions.SHIPPED_DESCRIPTION_NAMES], ids=["shipped", "withheld"])
@pytest.mark.parametrize("corpora", [("honeyhive-openai",), ("mlflow", "mlflow-haystack")], ids=str)
def test_a_trace_is_read_the_same_alone_and_after_other_traces_in_either_order(
    corpora: tuple[str, ...], withheld: tuple[str, ...], tmp_path: Path
) -> None:
    # HoneyHive's `no_tool` and the later turns of `multi_turn` and `two_runs` each hold one
    # `chain` span calling nothing, after traces whose chains call tools; MLflow's Haystack
    # pipeline an `AGENT` span whose steps carry the kind key's `null`, after MLflow's own traces
    # whose agents' calls the key names: what one trace shows of a key says nothing of another's.
    traces = traces_apart(corpora, tmp_path)
    alone: dict[Path, list[AgentRun]] = {}
    for trace in traces:
        conventions.use_descriptions((), withheld=withheld)
        alone[trace] = read(trace)
    for order in (traces, traces[::-1]):
        conventions.use_descriptions((), withheld=withheld)
        after_others = {trace: read(trace) for trace in order}
        assert after_others == alone
