"""Hostile attribute values on spans ended through the real SDK with the processor attached:
JSON and Python reprs nested a thousand levels deep, huge numbers, lone surrogates, wide objects,
on a run's messages, its metadata and its tool calls. Nothing raises into the agent's thread,
every part of the hostile run still reads, and the good run ended beside it is scored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider

from otel_scorers import AgentRun, ScoringSpanProcessor

#: Where a hostile value goes: a run span's attribute or the tool span's arguments and result.
PLACES = ("gen_ai.input.messages", "gen_ai.output.messages", "metadata", "tool")


def nested_json(depth: int, opener: str) -> str:
    if opener == "[":
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


def nested_repr(depth: int) -> str:
    return "{'a': " * depth + "None" + "}" * depth


#: Depths around the bounds that matter: the project's (64), Python's recursion limit (1,000) and
#: orjson's (1,024).
DEPTHS = st.sampled_from(
    (63, 64, 65, 200, 960, 980, 990, 999, 1_000, 1_023, 1_024, 1_025, 5_000)
) | st.integers(1, 1_100)

hostile_texts = st.one_of(
    st.builds(nested_json, DEPTHS, st.sampled_from("[{")),
    st.builds(nested_repr, st.integers(60, 120)),
    st.builds(lambda depth: "[" * depth + "]" * depth, st.integers(60, 199)),  # a Python list repr too
    st.builds(lambda digits: "{'a': " + "9" * digits + "}", st.integers(4_000, 20_000)),
    st.builds(lambda digits: "[" + "9" * digits + "]", st.integers(4_000, 20_000)),
    st.builds(lambda wide: json.dumps({f"k{i}": [i] for i in range(wide)}), st.integers(1, 20_000)),
    st.builds(lambda depth: '[{"role":"user","content":' + nested_json(depth, "{") + "}]", DEPTHS),
    st.text(min_size=0, max_size=40),  # lone surrogates, NULs, controls
)


class ReadsEverything:
    """A scorer reading every part of a run that is read lazily, keeping the runs it read."""

    name = "reads_everything"
    needs: frozenset[str] = frozenset()
    binary = False

    def __init__(self) -> None:
        self.read: dict[str, AgentRun] = {}

    def score(self, run: AgentRun) -> float:
        parts = (run.input, run.output, run.context, run.conversation_id, run.tool_definitions)
        calls = [(call.name, call.arguments, call.result) for call in run.tool_calls]
        assert parts is not None and calls is not None
        self.read[str(run.agent_name)] = run
        return 1.0


@pytest.fixture(scope="module")
def attached() -> Iterator[tuple[TracerProvider, ScoringSpanProcessor, ReadsEverything]]:
    scorer = ReadsEverything()
    provider = TracerProvider()
    processor = ScoringSpanProcessor([scorer], tracer_provider=provider)
    provider.add_span_processor(processor)
    yield provider, processor, scorer
    provider.shutdown()


def end_run(provider: TracerProvider, agent: str, place: str, value: str) -> None:
    tracer = provider.get_tracer("hostile-agent")
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}]
        ),
    }
    tool: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup",
        "gen_ai.tool.call.id": "call-1",
    }
    if place == "tool":
        tool |= {"gen_ai.tool.call.arguments": value, "gen_ai.tool.call.result": value}
    else:
        attributes[place] = value
    with (
        tracer.start_as_current_span(f"invoke_agent {agent}", attributes=attributes),
        tracer.start_as_current_span("execute_tool lookup", attributes=tool),
    ):
        pass


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=hostile_texts, place=st.sampled_from(PLACES), number=st.integers(0, 10**9))
# Within orjson's 1,024 levels and beyond Python's 1,000 frames: each failed every scorer.
@example(value=nested_json(1_000, "["), place="tool", number=-1)
@example(value=nested_json(1_000, "{"), place="gen_ai.output.messages", number=-2)
@example(value=nested_json(5_000, "{"), place="metadata", number=-3)
def test_a_hostile_attribute_value_neither_raises_nor_costs_its_run_or_the_next(
    attached: tuple[TracerProvider, ScoringSpanProcessor, ReadsEverything],
    value: str,
    place: str,
    number: int,
) -> None:
    provider, processor, scorer = attached
    hostile, good = f"hostile-{number}", f"good-{number}"
    end_run(provider, hostile, place, value)  # raising here would be raising into the agent
    end_run(provider, good, "gen_ai.input.messages", json.dumps([{"role": "user", "content": "hello"}]))
    assert processor.force_flush(30_000)
    assert good in scorer.read, "the good run ended beside the hostile one was not scored"
    assert hostile in scorer.read, f"a run whose {place} holds hostile text could not be read"
    if place == "tool":
        (call,) = scorer.read[hostile].tool_calls
        assert call.name == "lookup"


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tokens=st.floats() | st.integers(-(2**63), 2**63 - 1), number=st.integers(0, 10**9))
@example(tokens=float("nan"), number=-1)  # a NaN or infinite token count lost its whole run
@example(tokens=float("inf"), number=-2)
def test_a_run_with_any_number_as_its_token_counts_is_scored(
    attached: tuple[TracerProvider, ScoringSpanProcessor, ReadsEverything], tokens: float, number: int
) -> None:
    provider, processor, scorer = attached
    agent = f"tokens-{number}"
    with provider.get_tracer("hostile-agent").start_as_current_span(
        f"invoke_agent {agent}",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            "gen_ai.usage.input_tokens": tokens,
            "gen_ai.usage.output_tokens": tokens,
        },
    ):
        pass
    assert processor.force_flush(30_000)
    assert agent in scorer.read
    usage = scorer.read[agent].usage
    if tokens != tokens or tokens in (float("inf"), float("-inf")):
        assert usage.input_tokens is None
