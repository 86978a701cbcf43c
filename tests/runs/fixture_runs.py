"""The learned fixture traces read as the file reader reads them, and the attribute values a
captured trace holds, for tests that check a rule on a real trace."""

from __future__ import annotations

import json
from pathlib import Path

from otel_scorers.model import AgentRun
from otel_scorers.runs.otlp_files import InputProblem, runs_from_files

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


def runs_in(path: Path) -> list[AgentRun]:
    """The runs of an OTLP/JSON file in the order they started; the file reads without a problem."""
    problems: list[InputProblem] = []
    runs = sorted(runs_from_files([path], problems), key=lambda run: run.start_ns)
    assert not problems
    return runs


def runs_of(corpus: str, scenario: str) -> list[AgentRun]:
    return runs_in(TRACES / corpus / f"{scenario}.json")


def attribute_values(corpus: str, scenario: str, span_name: str, key: str) -> list[str]:
    """The string values of `key` on the spans named `span_name` in the captured trace, in file
    order; the trace has at least one."""
    trace = json.loads((TRACES / corpus / f"{scenario}.json").read_text())
    found = [
        attribute["value"]["stringValue"]
        for resource in trace["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
        if span["name"] == span_name
        for attribute in span["attributes"]
        if attribute["key"] == key
    ]
    assert found, f"no {key} on a {span_name} span"
    return found
