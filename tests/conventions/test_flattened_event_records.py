"""A description reads a record an instrumentation flattened into the keys of a span's event
(`{event, attributes_under, nested}`), built back into the data it was written from: on WayFlow's
traces, whose prompts, answers and tool arguments are written so, with the shipped descriptions
withheld (the description here is the user's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_scorers import conventions
from otel_scorers.conventions.description import ConventionDescription
from otel_scorers.conventions.flat_records import nested_record
from otel_scorers.model import AgentRun
from otel_scorers.runs.otlp_files import InputProblem, runs_from_files
from tests.conventions.test_fixture_runs import assert_runs_match
from tests.runs.test_inferred_vocabulary_fixtures import no_shipped_descriptions

CORPUS = Path(__file__).parent.parent / "fixtures" / "traces" / "wayflow"

__all__ = ["no_shipped_descriptions"]  # the fixture, used by every test here

DESCRIPTION = {
    "name": "acme",
    "marker_attributes": ["conversational_component.name", "llm.model_id", "tool.name"],
    "run": {"when": {"name_prefix": "AgentExecution["}, "agent_name": "conversational_component.name"},
    "tool": {
        "when": {"name_prefix": "ToolExecutionSpan"},
        "name": "tool.name",
        "arguments": {"event": "ToolExecutionStartEvent", "attributes_under": "tool_request.inputs."},
        "result": {"event": "ToolExecutionResultEvent", "attribute": "tool_result.output"},
    },
    "model": {
        "when": {"name_prefix": "LlmGeneration["},
        "input": {
            "event": "LlmGenerationRequestEvent",
            "attributes_under": "prompt.messages.",
            "nested": True,
        },
        "output": {
            "event": "LlmGenerationResponseEvent",
            "attributes_under": "completion.message.",
            "nested": True,
        },
    },
}


def rebuilt(scenario: str) -> list[AgentRun]:
    problems: list[InputProblem] = []
    runs = runs_from_files([CORPUS / f"{scenario}.json"], problems)
    assert not problems, problems
    return sorted(runs, key=lambda run: run.start_ns)


@pytest.mark.parametrize("scenario", ["tool_then_answer", "two_tools", "multi_turn", "sub_agent"])
def test_a_description_reads_messages_and_arguments_flattened_into_an_event(scenario: str) -> None:
    conventions.use_descriptions([ConventionDescription.model_validate(DESCRIPTION)])
    runs = rebuilt(scenario)
    assert {run.convention for run in runs} == {"acme"}
    assert_runs_match(json.loads((CORPUS / f"{scenario}.truth.json").read_text()), "wayflow", runs)


def test_a_record_s_numbered_steps_are_items_of_lists() -> None:
    flat = {
        "0.role": "system",
        "0.contents.0.content": "Be brief.",
        "1.role": "user",
        "1.contents.0.content": "Hello",
        "1.tool_requests": "null",
    }
    assert nested_record(flat) == [
        {"role": "system", "contents": [{"content": "Be brief."}]},
        {"role": "user", "contents": [{"content": "Hello"}], "tool_requests": "null"},
    ]


def test_nested_needs_a_flattened_record() -> None:
    with pytest.raises(ValueError, match="nested"):
        ConventionDescription.model_validate(
            {"name": "acme", "run": {"input": {"attribute": "a", "nested": True}}}
        )
