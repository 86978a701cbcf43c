"""Judged conversation scorers through the public path: one judge call per conversation per
scorer (where judging at every turn made one per turn), and a shutdown that keeps to its timeout
however slow the judge."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from otel_scorers import ScoringSpanProcessor
from otel_scorers.conversations import ConversationSettings, StageLimits, bind_conversation
from otel_scorers.scorers.conversation import knowledge_retention, multi_turn
from otel_scorers.scorers.judge import Judge

from ..conftest import Telemetry
from ..judge_server import judge_server, make_judge
from ..spans import conversation_turn

pytestmark = pytest.mark.usefixtures("litellm_imported")


def _reply(body: dict[str, Any]) -> str:
    prompt = json.dumps(body["messages"])
    if "multi_turn" in prompt and "knowledge_retention" in prompt:  # a batch of both
        return json.dumps({"multi_turn": {"satisfied": True}, "knowledge_retention": {"turns": []}})
    return json.dumps({"satisfied": True}) if "criterion" in prompt else json.dumps({"turns": []})


def _processor(telemetry: Telemetry, judge: Judge, **settings: Any) -> ScoringSpanProcessor:
    conversations = ConversationSettings(
        bindings=(
            bind_conversation(multi_turn("The agent answered every question.", judge=judge)),
            bind_conversation(knowledge_retention(judge=judge)),
        ),
        limits=StageLimits(idle_timeout_s=3600),
        **settings,
    )
    processor = ScoringSpanProcessor([], conversations=conversations, **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    telemetry.export_spans_directly()
    return processor


def test_five_conversations_of_three_turns_make_one_batched_judge_call_each(telemetry: Telemetry) -> None:
    with judge_server(_reply) as server:
        judge = make_judge(server, batch=True)
        processor = _processor(telemetry, judge)
        tracer = telemetry.tracer_provider.get_tracer("agent")
        for turn in range(3):
            for conversation in range(5):
                question = f"question {turn} of c-{conversation}"
                conversation_turn(tracer, f"c-{conversation}", question, answer=f"re: {question}")
        processor.shutdown(10.0)  # ends the five conversations (at_shutdown: score)
        assert server.calls == 5  # one per conversation: both scorers in one batched call
    spans = [s for s in telemetry.finished_spans() if s.name.startswith("evaluate ")]
    assert len(spans) == 10 and all(s.attributes["gen_ai.evaluation.score.value"] == 1.0 for s in spans)


def test_shutdown_keeps_to_its_timeout_with_a_slow_judge_and_counts_what_it_cut_off(
    telemetry: Telemetry,
) -> None:
    with judge_server(_reply, latency_s=60.0) as server:
        judge = make_judge(server, timeout_s=120)
        processor = _processor(telemetry, judge)
        tracer = telemetry.tracer_provider.get_tracer("agent")
        for conversation in range(3):
            conversation_turn(tracer, f"slow-{conversation}", "hello", answer="re: hello")
        started = time.monotonic()
        processor.shutdown(0.5)
        # The timeout, then the scheduler's thread join while the cancelled calls unwind (about
        # 2.5 s): it did not wait for the judge's replies, a minute away (a guard far from both).
        assert time.monotonic() - started < 30.0
    dropped = telemetry.counter("otel_scorers.conversations", otel_scorers__outcome="dropped_shutdown")
    assert dropped == 3
