"""Every result says what made it: the evaluator version, a digest of the scorer's type, arguments,
prompt version and judge model, the same in every process and run for the same configuration,
and another when any of them changes; carried by the score, its evaluation span, its event, its
metrics (as the processor writes them) and through OTLP."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from otel_scorers import ScoringSpanProcessor, bind, checks
from otel_scorers.config import parse_config
from otel_scorers.model import Score
from otel_scorers.pipeline.scorer_call import evaluate
from otel_scorers.scorers import answer_relevancy, faithfulness, llm_scorer
from otel_scorers.scorers.judge import JudgeConfig
from tests.conftest import Telemetry
from tests.otlp_capture import OtlpCapture, attrs

CONFIG: dict[str, Any] = {
    "judge": {"model": "openai/gpt-4o-mini"},
    "scorers": [
        {"type": "includes", "args": {"expected": "sunny"}},
        {"type": "matches", "name": "celsius", "args": {"pattern": r"\d+ ?°C", "flags": "i"}},
        {"type": "tool_order", "args": {"order": ["search", "answer"]}},
        {"type": "answer_relevancy", "args": {"threshold": 0.7}},
        {"type": "tests.custom_scorers:polite"},
    ],
}
VERSION_PATTERN = r"^[0-9a-f]{12}$"

PRINT_VERSIONS = """
import json, sys
from otel_scorers.config import parse_config
config = parse_config(json.loads(sys.argv[1]))
print(json.dumps({binding.name: binding.evaluator_version for binding in config.scoring().bindings}))
"""


def versions_in_a_new_process(config: dict[str, Any], hash_seed: str) -> dict[str, str]:
    environment = {**os.environ, "PYTHONHASHSEED": hash_seed, "OPENAI_API_KEY": "sk-test"}
    done = subprocess.run(
        [sys.executable, "-c", PRINT_VERSIONS, json.dumps(config)],
        capture_output=True,
        text=True,
        env=environment,
        cwd=Path(__file__).parent.parent.parent,
        timeout=120,
        check=True,
    )
    versions: dict[str, str] = json.loads(done.stdout)
    return versions


def versions_here(config: dict[str, Any]) -> dict[str, str | None]:
    return {binding.name: binding.evaluator_version for binding in parse_config(config).scoring().bindings}


def test_the_same_configuration_has_the_same_versions_in_two_processes_and_two_runs() -> None:
    first = versions_in_a_new_process(CONFIG, "1")
    second = versions_in_a_new_process(CONFIG, "2")  # another hash seed: str hashes differ
    assert first == second
    assert set(first) == {"includes", "celsius", "tool_order", "answer_relevancy", "polite"}
    assert versions_here(CONFIG) == first == versions_here(CONFIG)
    assert all(re.fullmatch(VERSION_PATTERN, version) for version in first.values())
    assert len(set(first.values())) == len(first)  # each scorer its own


def test_a_check_s_version_is_the_sha256_of_its_canonical_json() -> None:
    """The formula as docs/emission.md states it, computed here by hand."""
    canonical = '{"args":{"expected":"sunny","ignore_case":true},"model":null,"prompt_version":null,"type":"includes"}'
    expected = hashlib.sha256(canonical.encode()).hexdigest()[:12]
    assert bind(checks.includes("sunny")).evaluator_version == expected
    assert versions_here({"scorers": [{"type": "includes", "args": {"expected": "sunny"}}]}) == {
        "includes": expected
    }


def with_scorer(index: int, **changes: Any) -> dict[str, Any]:
    scorers = [dict(entry) for entry in CONFIG["scorers"]]
    scorers[index] = {**scorers[index], **changes}
    return {**CONFIG, "scorers": scorers}


@pytest.mark.parametrize(
    ("changed", "name"),
    [
        (with_scorer(0, args={"expected": "rainy"}), "includes"),
        (with_scorer(0, args={"expected": "sunny", "ignore_case": False}), "includes"),
        (with_scorer(1, args={"pattern": r"\d+ ?°F", "flags": "i"}), "celsius"),
        (with_scorer(2, args={"order": ["answer", "search"]}), "tool_order"),
        (with_scorer(3, args={"threshold": 0.8}), "answer_relevancy"),
        (with_scorer(3, args={"threshold": 0.7, "steps": 3}), "answer_relevancy"),
        (with_scorer(3, args={"threshold": 0.7, "uncertainty_weight": 0.5}), "answer_relevancy"),
        (
            with_scorer(3, args={"threshold": 0.7, "model": "anthropic/claude-3-5-haiku-latest"}),
            "answer_relevancy",
        ),
        ({**CONFIG, "judge": {"model": "openai/gpt-4o"}}, "answer_relevancy"),
    ],
)
def test_a_changed_argument_or_model_changes_that_scorer_s_version_only(
    changed: dict[str, Any], name: str
) -> None:
    before, after = versions_here(CONFIG), versions_here(changed)
    assert before[name] != after[name]
    assert {key: value for key, value in before.items() if key != name} == {
        key: value for key, value in after.items() if key != name
    }


class Polite(BaseModel):
    polite: bool


class PoliteWithReason(BaseModel):
    polite: bool
    reason: str


JUDGE = JudgeConfig(model="openai/gpt-4o-mini")  # never the process's default judge


def polite(prompt: str = "Is the answer polite?", **options: Any) -> str | None:
    shape = options.pop("shape", Polite)
    scorer = llm_scorer("polite", prompt, shape, score=lambda reply: reply.polite, judge=JUDGE, **options)
    return bind(scorer).evaluator_version


def test_a_judge_scorer_s_version_follows_its_prompt_its_prompt_version_its_shape_and_its_model() -> None:
    base = polite(model="openai/gpt-4o-mini")
    assert base == polite(model="openai/gpt-4o-mini")
    others = {
        polite("Is the answer polite to the user?", model="openai/gpt-4o-mini"),
        polite(model="openai/gpt-4o-mini", prompt_version="2"),
        polite(model="openai/gpt-4o-mini", shape=PoliteWithReason),
        polite(model="openai/gpt-4o"),
        polite(model="openai/gpt-4o-mini", system="You are strict."),
    }
    assert base not in others and len(others) == 5


def test_judged_scorers_of_different_rules_or_options_differ() -> None:
    assert (
        bind(faithfulness(model="openai/gpt-4o-mini", judge=JUDGE)).evaluator_version
        != bind(faithfulness(model="openai/gpt-4o-mini", scale=10, judge=JUDGE)).evaluator_version
    )
    assert (
        bind(faithfulness(model="openai/gpt-4o-mini", judge=JUDGE)).evaluator_version
        != bind(answer_relevancy(model="openai/gpt-4o-mini", judge=JUDGE)).evaluator_version
    )


def test_renaming_a_binding_keeps_its_version_and_every_result_carries_it() -> None:
    from otel_scorers.model import AgentRun

    run = AgentRun(trace_id=1, span_id=2, agent_name="weather", input="q", output="It is sunny.")
    missing = AgentRun(1, 2, "weather", "q", None, missing=frozenset({"output"}))
    named = bind(checks.includes("sunny"), name="says-sunny")
    assert named.evaluator_version == bind(checks.includes("sunny")).evaluator_version
    scored, skipped = evaluate(named, run), evaluate(named, missing)
    assert not hasattr(scored, "__await__") and not hasattr(skipped, "__await__")
    assert scored.evaluator_version == skipped.evaluator_version == named.evaluator_version  # type: ignore[union-attr]

    def broken(run: AgentRun) -> float:
        raise RuntimeError("no")

    failing = bind(checks.Check("broken", broken))
    result = evaluate(failing, run)
    assert result.error is not None and result.evaluator_version == failing.evaluator_version  # type: ignore[union-attr]


RUN_ATTRIBUTES = {
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": "weather",
    "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}]',
}


def test_the_evaluation_span_event_and_score_metrics_carry_the_version(telemetry: Telemetry) -> None:
    telemetry.export_spans_directly()
    binding = bind(checks.similarity("sunny"))  # a continuous score: measured into the histogram too
    processor = ScoringSpanProcessor([binding], export=False, **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    with telemetry.tracer_provider.get_tracer("agent").start_as_current_span(
        "invoke_agent weather", attributes=RUN_ATTRIBUTES
    ):
        pass
    assert processor.force_flush(10_000)
    processor.shutdown()
    version = binding.evaluator_version
    (span,) = [span for span in telemetry.finished_spans() if span.name == "evaluate similarity"]
    assert span.attributes is not None and span.attributes["otel_scorers.evaluator.version"] == version
    (event,) = telemetry.events()
    assert event.log_record.attributes is not None
    assert event.log_record.attributes["otel_scorers.evaluator.version"] == version
    (point,) = telemetry.metric_points("gen_ai.evaluation.score")
    assert point.attributes["otel_scorers.evaluator.version"] == version
    assert telemetry.counter("gen_ai.evaluation.results", otel_scorers__evaluator__version=version) == 1


def test_scores_written_as_otlp_carry_the_version(monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider

    with OtlpCapture() as capture:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", capture.endpoint)
        provider = TracerProvider()
        binding = bind(checks.includes("sunny"))
        processor = ScoringSpanProcessor(
            [binding],
            tracer_provider=provider,
            logger_provider=LoggerProvider(),
            meter_provider=MeterProvider(),
        )
        provider.add_span_processor(processor)
        with provider.get_tracer("agent").start_as_current_span(
            "invoke_agent weather", attributes=RUN_ATTRIBUTES
        ):
            pass
        assert processor.force_flush(10_000)
        processor.shutdown()
        ((_, _, span),) = capture.spans()
        assert attrs(span.attributes)["otel_scorers.evaluator.version"] == binding.evaluator_version
        (record,) = list(capture.log_records())
        assert attrs(record.attributes)["otel_scorers.evaluator.version"] == binding.evaluator_version


def test_conversation_scores_carry_their_binding_s_version_too() -> None:
    from otel_scorers.conversation_turns import Conversation, Turn
    from otel_scorers.conversations.scoring import bind_conversation
    from otel_scorers.scorers.conversation import tool_error_rate, turns

    conversation = Conversation("c1", (Turn("c1", 1, 2, 0, 1, "weather", "q", "a"),))
    counted = bind_conversation(turns())
    assert counted.evaluator_version == bind_conversation(turns()).evaluator_version
    assert counted.evaluator_version != bind_conversation(tool_error_rate()).evaluator_version
    score = counted.evaluate(conversation)
    assert isinstance(score, Score) and score.value == 1.0
    assert score.evaluator_version == counted.evaluator_version is not None
