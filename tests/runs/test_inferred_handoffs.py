"""A tracer's own vocabulary read with its shipped description withheld, where a handoff is a
span of no kind naming the agent handed to (`to_agent`): the agent handed to goes on in the same
run, as a described handoff's does, and is no run of its own."""

from __future__ import annotations

from otel_scorers.conventions.inferred_handoffs import handoff_key
from otel_scorers.span_record import SpanRecord
from tests.runs.test_inferred_vocabulary_fixtures import (
    assert_read_as_written,
    no_shipped_descriptions,
    rebuilt,
)

__all__ = ["no_shipped_descriptions"]  # the fixture, used by every test here


def test_a_span_naming_another_run_s_agent_as_the_one_handed_to_is_a_handoff() -> None:
    # AgentOps over the OpenAI Agents SDK: `agentops.span.kind = agent` on each agent's span, and
    # a `handoff` span of no kind carrying `from_agent` / `to_agent`.
    runs = rebuilt("agentops-openai-agents", "handoff_after_tool")
    assert [(run.agent_name, run.final_agent) for run in runs] == [("triage_agent", "weather_agent")]
    assert_read_as_written("agentops-openai-agents", "handoff_after_tool", runs)


def span(span_id: int, name: str, **attributes: object) -> SpanRecord:
    return SpanRecord(trace_id=1, span_id=span_id, parent_span_id=None, name=name, attributes=attributes)


def test_the_handoff_key_names_the_agent_of_another_run() -> None:
    runs = [span(1, "triage", **{"agent.name": "triage_agent"}), span(2, "weather_agent")]
    handoff = span(3, "handoff", from_agent="triage_agent", to_agent="weather_agent")
    assert handoff_key([*runs, handoff], runs) == "to_agent"
    assert (
        handoff_key([*runs, span(3, "x", **{"acme.handoff.to": "triage_agent"})], runs) == "acme.handoff.to"
    )
    # Naming no run's agent, or with one run only: no handoff.
    assert handoff_key([*runs, span(3, "handoff", to_agent="billing_agent")], runs) is None
    assert handoff_key([runs[0], handoff], runs[:1]) is None
    # A key not named for the agent handed to.
    assert handoff_key([*runs, span(3, "x", next_agent="weather_agent")], runs) is None
