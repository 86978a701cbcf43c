"""A tracer's own vocabulary read with its shipped description withheld, where its kind values
are dotted (`agentic.invocation`, `agentic.tool.invocation`, `inference.framework`), its spans'
input and output are kept in events (`data.input`, `data.output`), and what a span touched is named
by typed entities (`entity.1.name` beside `entity.1.type = agent.langgraph`): Monocle's corpus,
read by the fixture tests' own comparison."""

from __future__ import annotations

import pytest

from tests.runs.test_inferred_vocabulary_fixtures import (
    assert_read_as_written,
    no_shipped_descriptions,
    rebuilt,
)

__all__ = ["no_shipped_descriptions"]  # the fixture, used by every test here


@pytest.mark.parametrize(
    "scenario", ["tool_then_answer", "no_tool", "multi_turn", "agent_in_tool", "failing_tool", "two_tools"]
)
def test_dotted_kind_values_and_records_in_events_are_read_without_a_description(scenario: str) -> None:
    # The run is the `agentic.invocation` span (its `agentic.turn` wrapper names no kind of work),
    # named by `entity.1.name`; its request the last of the texts in its `data.input` event.
    runs = rebuilt("monocle-langgraph", scenario)
    assert {run.convention for run in runs} == {"inferred:span.type"}
    assert_read_as_written("monocle-langgraph", scenario, runs)
