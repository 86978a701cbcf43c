"""smolagents 1.15 under OpenInference's smolagents instrumentation 0.1.11
(tests/fixtures/traces/openinference011-smolagents), the version drift of `smolagents`."""

from __future__ import annotations

import json

from .fixture_runs import TRACES, attribute_values, runs_of


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
