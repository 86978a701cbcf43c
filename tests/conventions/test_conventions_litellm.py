"""LiteLLM's OpenTelemetry callback under a hand-written agent: the runs of its captured traces
(tests/fixtures/traces/litellm-otel*) as a run read when its span ends sees them, without the
spans LiteLLM's logging worker writes after that, and raw request payloads that cannot be read.

The whole traces are rebuilt against their truth by tests/test_fixture_runs.py.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from otel_scorers import bind, checks
from otel_scorers.model import Score
from otel_scorers.pipeline.scorer_call import evaluate
from otel_scorers.runs.otlp_files import InputProblem, read_spans
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanRecord

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"


def captured(corpus: str, scenario: str) -> list[SpanRecord]:
    problems: list[InputProblem] = []
    spans = list(read_spans(TRACES / corpus / f"{scenario}.json", problems))
    assert not problems
    return spans


def without_last_call(spans: list[SpanRecord]) -> list[SpanRecord]:
    """The trace as it stands when the agent span ends: the last call's LiteLLM spans (its
    `litellm_request` and `raw_gen_ai_request`, or the raw one alone), written after the call
    returned, are not there yet."""
    litellm = sorted((span for span in spans if span.scope == "litellm"), key=lambda span: span.start_ns)
    last_start = litellm[-1].start_ns
    return [span for span in spans if span.scope != "litellm" or span.start_ns < last_start]


@pytest.mark.parametrize("corpus", ["litellm-otel", "litellm-otel-request-span"])
def test_a_run_read_before_its_last_call_was_written_has_its_answer_unrecorded_not_empty(corpus: str) -> None:
    (run,) = build_runs(without_last_call(captured(corpus, "tool_then_answer")))
    assert run.agent_name == "weather_agent"
    assert run.input == "What is the weather in Paris?"
    assert run.output is None
    assert "output" in run.missing and "output" in run.unrecorded
    assert [(call.name, call.result, call.state) for call in run.tool_calls] == [
        ("get_weather", "Sunny, 21°C", "ok")
    ]
    score = evaluate(bind(checks.includes("sunny")), run)
    assert isinstance(score, Score) and score.value is None and score.skipped is not None


def test_with_every_call_written_the_default_mode_run_is_whole() -> None:
    (run,) = build_runs(captured("litellm-otel", "tool_then_answer"))
    assert run.convention == "litellm"
    assert run.output == "It is sunny and 21°C in Paris."
    assert (run.usage.input_tokens, run.usage.output_tokens) == (40, 20)  # both calls, not the span's one
    assert run.models == ("gpt-4o-mini",)
    assert not run.missing


def test_a_raw_payload_too_long_to_read_is_not_captured_content_never_a_message() -> None:
    spans = captured("litellm-otel", "no_tool")
    changed = []
    for span in spans:
        if span.name == "raw_gen_ai_request":
            attributes = dict(span.attributes)
            attributes["llm.openai.messages"] = "[{'role': 'user', 'content': '" + "x" * 20_000 + "'}]"
            span = replace(span, attributes=attributes)
        changed.append(span)
    (run,) = build_runs(changed)
    assert run.input is None and "input" in run.missing
    assert run.output == "Bonjour !"


def test_without_raw_spans_the_agent_span_gives_the_request_and_an_answer_only_when_its_call_gave_one() -> (
    None
):
    spans = captured("litellm-otel-semconv", "tool_then_answer")
    (run,) = build_runs(spans)
    # The call written onto the span asked for a tool: the answer came later, after the span ended.
    assert run.input == "What is the weather in Paris?"
    assert run.output is None and "output" in run.missing and "output" in run.unrecorded
    # Had the last call's write come in time, the span would hold the answer: it is read.
    answer = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}])
    won = []
    for span in spans:
        if span.name.startswith("invoke_agent"):
            attributes = {
                key: value
                for key, value in span.attributes.items()
                if not key.startswith("gen_ai.completion.")
            }
            attributes["gen_ai.output.messages"] = answer
            span = replace(span, attributes=attributes)
        won.append(span)
    (run,) = build_runs(won)
    assert run.output == "Sunny." and "output" not in run.missing


def test_an_agent_span_named_otherwise_is_still_a_run_by_its_own_agent_name() -> None:
    spans = [
        replace(span, name="weather agent turn") if span.name.startswith("invoke_agent") else span
        for span in captured("litellm-otel", "tool_then_answer")
    ]
    (run,) = build_runs(spans)
    assert (run.agent_name, run.output) == ("weather_agent", "It is sunny and 21°C in Paris.")
