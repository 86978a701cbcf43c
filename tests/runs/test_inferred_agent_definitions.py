"""A tracer's own vocabulary read with its shipped description withheld, where its kind key names
tool and model calls and every other span one catch-all value (`DEFAULT`): a run is a span of
that value whose input records the agent's definition (its name, its tools), its handoffs the
calls naming the agent they hand to. Laminar's corpus, read by the fixture tests' own comparison."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_scorers.runs.otlp_files import InputProblem, runs_from_files
from tests.runs.test_inferred_vocabulary_fixtures import (
    TRACES,
    assert_read_as_written,
    no_shipped_descriptions,
    rebuilt,
)

__all__ = ["no_shipped_descriptions"]  # the fixture, used by every test here


@pytest.mark.parametrize(
    "scenario", ["tool_then_answer", "no_tool", "agent_as_tool", "failing_tool", "handoff_after_tool"]
)
def test_runs_recording_their_agents_definition_are_read_without_a_description(scenario: str) -> None:
    # The run is the `DEFAULT` span whose `lmnr.span.input` is `{"name", "tools", ...}`; the
    # `agents.task` and `agents.turn` spans around and in it record no agent's definition.
    runs = rebuilt("lmnr-openai-agents", scenario)
    assert {run.convention for run in runs} == {"inferred:lmnr.span.type"}
    assert_read_as_written("lmnr-openai-agents", scenario, runs)


def test_a_kind_key_of_one_namespace_is_not_read_for_a_definition_recorded_under_another(
    tmp_path: Path,
) -> None:
    # Every span also carries `host_type` (a key of one part before its underscores, `host_`,
    # as `inferred_description.prefixes` parts it), listed first: the definition recorded
    # under `lmnr.span.` is read with `lmnr.span.type`, whose values say which spans are tools.
    document = json.loads((TRACES / "lmnr-openai-agents" / "tool_then_answer.json").read_text())
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                span["attributes"].insert(0, {"key": "host_type", "value": {"stringValue": "web"}})
    path = tmp_path / "tool_then_answer.json"
    path.write_text(json.dumps(document))
    problems: list[InputProblem] = []
    runs = list(runs_from_files([path], problems))
    assert not problems, problems
    assert {run.convention for run in runs} == {"inferred:lmnr.span.type"}
    assert_read_as_written("lmnr-openai-agents", "tool_then_answer", runs)
