"""Real traces after a version drift, replayed span by span through a real TracerProvider with
the ScoringSpanProcessor attached, rebuild the runs the generators' truth holds, as the drifted
files do (`test_version_drifts.py`).

Live, a trace is kept only from a span that may start a run (`may_start_run`): a run's kind of a
newer version than its reader knows (`AGENT.v2`, `invoke_agent.v2`, `agent_run.v2`) must open it
as the kind without the version does. The corpora are those whose run spans a kind value marks
as they start (OpenInference's, the GenAI conventions', OpenLLMetry's).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.drifts import DRIFTS
from otel_scorers.span_record import SpanRecord

from ..conftest import Telemetry
from .test_fixture_runs import PENDING, TRACES, assert_runs_match, case_id
from .test_fixture_runs_in_process import IN_PROCESS_LIMITS, replayed_runs, trace_records

#: Corpora whose runs a kind value marks: OpenInference's `AGENT` (smolagents, CrewAI, the OpenAI
#: Agents JS SDK, AG2), the GenAI conventions' `invoke_agent` (Spring AI), OpenLLMetry's
#: `workflow` and `agent` (Agno).
CORPORA = (
    "smolagents",
    "crewai-openinference",
    "openinference-openai-agentsjs",
    "spring-ai",
    "agno-openllmetry",
    "ag2-openinference",
)
#: The drifts whose copies the tests replay: those that move a fact the live start test reads.
LIVE_DRIFTS = ("kind-version",)


def cases() -> list[object]:
    return [
        pytest.param(path, id=case_id(path))
        for corpus in CORPORA
        for path in sorted((TRACES / corpus).glob("*.truth.json"))
        if case_id(path) not in PENDING
        and (path.parent.name, path.name.removesuffix(".truth.json")) not in IN_PROCESS_LIMITS
    ]


@pytest.mark.parametrize("truth_path", cases())
@pytest.mark.parametrize("drift", LIVE_DRIFTS)
def test_a_drifted_trace_is_read_in_process_as_from_files(
    drift: str, truth_path: Path, telemetry: Telemetry, tmp_path: Path
) -> None:
    runs = replayed_runs(truth_path, telemetry, marked_after_start=False, drift=drift, directory=tmp_path)
    assert_runs_match(json.loads(truth_path.read_text()), truth_path.parent.name, runs)


def texts(record: SpanRecord) -> list[str]:
    return [value for value in record.attributes.values() if isinstance(value, str)]


@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("drift", LIVE_DRIFTS)
def test_the_drift_moves_the_run_kinds_of_each_corpus(drift: str, corpus: str, tmp_path: Path) -> None:
    """The replay above reads drifted kinds: each corpus has versioned kind values once drifted."""
    assert drift in DRIFTS
    path = next(iter(sorted((TRACES / corpus).glob("*.truth.json"))))
    plain = {value for record in trace_records(path) for value in texts(record)}
    drifted = {value for record in trace_records(path, drift, tmp_path) for value in texts(record)}
    versioned = {value for value in drifted - plain if value.endswith(".v2")}
    assert versioned, f"no kind value of {corpus} was given a version"
