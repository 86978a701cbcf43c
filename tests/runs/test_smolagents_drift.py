"""smolagents 1.15 under OpenInference's smolagents instrumentation 0.1.11
(tests/fixtures/traces/openinference011-smolagents), the version drift of `smolagents`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from .fixture_runs import TRACES, attribute_values, runs_in, runs_of


def test_a_run_recorded_as_its_positional_arguments_reads_the_task_as_its_input() -> None:
    # 0.1.11 records `run(task)` as its bound arguments: {"args": [task], "kwargs": {}}.
    assert attribute_values(
        "openinference011-smolagents", "two_runs", "ToolCallingAgent.run", "input.value"
    ) == [
        '{"args": ["What is the weather in Paris?"], "kwargs": {}}',
        '{"args": ["What time is it in Paris?"], "kwargs": {}}',
    ]
    truth = json.loads((TRACES / "openinference011-smolagents" / "two_runs.truth.json").read_text())
    runs = runs_of("openinference011-smolagents", "two_runs")
    assert [run.input for run in runs] == [expected["input"] for expected in truth["runs"]]


def _with_run_inputs(tmp_path: Path, recorded: Callable[[str], str]) -> Path:
    """The two-run trace with each run span's input recorded as `recorded(task)`."""
    trace = json.loads((TRACES / "openinference011-smolagents" / "two_runs.json").read_text())
    for resource in trace["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for attribute in span["attributes"] if span["name"] == "ToolCallingAgent.run" else ():
                    if attribute["key"] == "input.value":
                        task = json.loads(attribute["value"]["stringValue"])["args"][0]
                        attribute["value"]["stringValue"] = recorded(task)
    path = tmp_path / "two_runs.json"
    path.write_text(json.dumps(trace))
    return path


@pytest.mark.parametrize(
    "recorded",
    [
        pytest.param(lambda task: json.dumps({"args": [], "kwargs": {"task": task}}), id="by-keyword"),
        pytest.param(lambda task: json.dumps({"kwargs": {"task": task}}), id="keywords-alone"),
        pytest.param(
            lambda task: json.dumps({"args": [{"task": task}], "kwargs": {}}), id="an-object-argument"
        ),
    ],
)
def test_a_run_recorded_as_its_call_reads_the_task_the_shared_reduction_finds(
    tmp_path: Path, recorded: Callable[[str], str]
) -> None:
    # `run(task=...)` is recorded with the task among the keyword arguments.
    truth = json.loads((TRACES / "openinference011-smolagents" / "two_runs.truth.json").read_text())
    runs = runs_in(_with_run_inputs(tmp_path, recorded))
    assert [run.input for run in runs] == [expected["input"] for expected in truth["runs"]]
