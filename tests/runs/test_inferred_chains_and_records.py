"""A vocabulary nobody described whose runs are `chain` spans, whose kind key is parted by
underscores and whose records are flattened into one key per field, read from what its traces
show (`conventions/inferred.py`, `inferred_flat.py`), on HoneyHive's
traces of a hand-written tool loop (no description of it ships: the shipped ones are withheld
all the same, as a framework nobody described would be read)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_scorers import conventions
from otel_scorers.conventions.description import ConventionDescription
from otel_scorers.model import AgentRun
from otel_scorers.runs.otlp_files import InputProblem, runs_from_files
from tests.conventions.test_fixture_runs import assert_runs_match
from tests.runs.test_inferred_vocabulary_fixtures import no_shipped_descriptions

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"
CORPUS = "honeyhive-openai"


__all__ = ["no_shipped_descriptions"]  # the fixture, used by every test here


def rebuilt(scenario: str) -> list[AgentRun]:
    problems: list[InputProblem] = []
    runs = runs_from_files([TRACES / CORPUS / f"{scenario}.json"], problems)
    assert not problems, problems
    return sorted(runs, key=lambda run: run.start_ns)


def truth(scenario: str) -> dict[str, object]:
    return json.loads((TRACES / CORPUS / f"{scenario}.truth.json").read_text())  # type: ignore[no-any-return]


@pytest.mark.parametrize("scenario", ["tool_then_answer", "search_then_summarize", "nested"])
def test_chain_spans_calling_tools_are_the_runs_of_a_key_naming_no_agent_and_no_model_call(
    scenario: str,
) -> None:
    # `honeyhive_event_type` names `chain` and `tool` only (the model calls are not traced): each
    # chain is an agent's run, its tools its calls, an agent inside a tool a run of its own.
    runs = rebuilt(scenario)
    assert {run.convention for run in runs} == {"inferred:honeyhive_event_type"}
    assert_runs_match(truth(scenario), CORPUS, runs)


def test_a_record_flattened_into_keys_is_read_whole_not_by_a_field_named_like_a_part() -> None:
    # `honeyhive_inputs.request` is trip_agent's argument named `request`, not the runs' input:
    # the input is the record under `honeyhive_inputs.` (`{"question": ...}` for weather_expert).
    trip, expert = rebuilt("nested")
    assert (trip.input, expert.input) == (
        "Ask the weather expert about Paris.",
        "What is the weather in Paris?",
    )
    assert [call.arguments for call in expert.tool_calls] == [{"city": "Paris"}]


def test_of_two_kind_keys_as_good_the_shorter_is_read() -> None:
    # `honeyhive_metadata.event_type` copies `honeyhive_event_type` under another namespace,
    # where no record of the span's input or output is.
    assert {run.convention for run in rebuilt("tool_then_answer")} == {"inferred:honeyhive_event_type"}


@pytest.mark.parametrize("scenario", ["multi_turn", "two_runs"])
def test_a_chain_calling_nothing_is_not_read_even_after_its_key_named_runs_and_their_calls(
    scenario: str,
) -> None:
    # The second trace's chain answered at once (no tool span under it): that the first trace
    # showed the key naming runs and the tools they call says nothing of it (tests/runs/test_reading_order.py).
    whole = truth(scenario)
    runs = rebuilt(scenario)
    assert_runs_match({**whole, "runs": whole["runs"][:1]}, CORPUS, runs)


def test_a_chain_alone_in_its_trace_says_too_little_to_be_read() -> None:
    assert rebuilt("no_tool") == []


def test_a_description_reads_a_record_flattened_into_keys() -> None:
    described = ConventionDescription.model_validate(
        {
            "name": "acme",
            "marker_attributes": ["honeyhive_event_type"],
            "run": {
                "when": {"attributes": {"honeyhive_event_type": "chain"}},
                "agent_name": "honeyhive_event_name",
                "input": {"attributes_under": "honeyhive_inputs."},
                "output": {"attributes_under": "honeyhive_outputs."},
            },
            "tool": {
                "when": {"attributes": {"honeyhive_event_type": "tool"}},
                "arguments": {"attributes_under": "honeyhive_inputs."},
                "result": "honeyhive_outputs.result",
            },
        }
    )
    conventions.use_descriptions([described])
    (run,) = rebuilt("tool_then_answer")
    assert run.convention == "acme"
    assert_runs_match(truth("tool_then_answer"), CORPUS, [run])


def test_a_flattened_record_is_read_from_one_place_only() -> None:
    with pytest.raises(ValueError, match="attributes_under"):
        ConventionDescription.model_validate(
            {"name": "acme", "run": {"input": {"attributes_under": "a.", "attribute": "b"}}}
        )
