"""Conversations through the public path: the in-process processor, real SDK spans, a fake clock."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from otel_scorers import ScoringSpanProcessor
from otel_scorers.conversations.pipeline import ConversationSettings
from otel_scorers.conversations.scoring import bind_conversation
from otel_scorers.conversations.stage import StageLimits
from otel_scorers.example_agent import ExampleAgent, ScriptedRun
from otel_scorers.scorers.conversation import tool_error_rate, turns
from tests.conftest import Telemetry

IDLE_S = 300.0


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _processor(
    telemetry: Telemetry, clock: FakeClock, sampling: float, **settings: Any
) -> ScoringSpanProcessor:
    conversations = ConversationSettings(
        bindings=(
            bind_conversation(turns(), sampling=sampling),
            bind_conversation(tool_error_rate(), sampling=sampling),
        ),
        limits=StageLimits(idle_timeout_s=IDLE_S, max_duration_s=10 * IDLE_S * 100),
        clock=clock,
        tick_s=3600,  # the test polls, through force_flush
        **settings,
    )
    processor = ScoringSpanProcessor([], conversations=conversations, **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    telemetry.export_spans_directly()
    return processor


def _conversation_spans(telemetry: Telemetry) -> list[Any]:
    return [span for span in telemetry.finished_spans() if span.name.startswith("evaluate ")]


def test_a_thousand_conversations_sampled_at_a_tenth_are_each_scored_once_after_idling_with_all_their_turns(
    telemetry: Telemetry,
) -> None:
    clock = FakeClock()
    processor = _processor(telemetry, clock, sampling=0.1)
    agent = ExampleAgent(telemetry.tracer_provider.get_tracer("agent"))
    generator = random.Random(25)
    lengths = {f"conv-{n:04d}": generator.randint(2, 8) for n in range(1000)}
    # Conversation n starts at second n // 10 and has a turn every 20 s: many are open at once.
    schedule: list[tuple[float, str, int]] = []
    for n, (conversation_id, length) in enumerate(lengths.items()):
        schedule.extend((n // 10 + 20.0 * turn, conversation_id, turn) for turn in range(length))
    schedule.sort()
    last_turn_at: dict[str, float] = {}
    run_spans: dict[str, set[int]] = {}
    last_run: dict[str, Any] = {}
    for at, conversation_id, turn in schedule:
        clock.now = at
        agent.run(
            ScriptedRun(
                f"question {turn} of {conversation_id}", (), f"answer {turn}", conversation_id=conversation_id
            )
        )
        last_turn_at[conversation_id] = at
        if turn % 3 == 0:
            processor.force_flush()  # the engine hands turns to the stage as their traces complete
    assert processor.force_flush()
    for span in telemetry.finished_spans():
        conversation_id = (span.attributes or {}).get("gen_ai.conversation.id")
        if span.name.startswith("invoke_agent") and conversation_id:
            run_spans.setdefault(str(conversation_id), set()).add(span.context.span_id)
            latest = last_run.get(str(conversation_id))
            if latest is None or span.start_time > latest.start_time:
                last_run[str(conversation_id)] = span

    # Halfway through the idle time after the last turn, only conversations idle long enough are scored.
    clock.now = max(last_turn_at.values()) + IDLE_S / 2
    assert processor.force_flush()
    early = {str(span.attributes["gen_ai.conversation.id"]) for span in _conversation_spans(telemetry)}
    assert early and all(last_turn_at[c] <= clock.now - IDLE_S for c in early)

    clock.now += IDLE_S
    assert processor.force_flush()
    spans = [
        span
        for span in _conversation_spans(telemetry)
        if span.attributes["gen_ai.evaluation.name"] == "turns"
    ]
    scored = Counter(str(span.attributes["gen_ai.conversation.id"]) for span in spans)
    assert 70 <= len(scored) <= 130  # a tenth of a thousand, by the hash of each id
    assert set(scored.values()) == {1}  # each exactly once
    for span in spans:
        conversation_id = str(span.attributes["gen_ai.conversation.id"])
        assert span.attributes["gen_ai.evaluation.score.value"] == lengths[conversation_id]  # every turn
        assert span.attributes["otel_scorers.conversation.ended_by"] == "idle"
        parent = last_run[conversation_id]  # in the last run's trace, its run span the parent
        assert (
            span.context.trace_id == parent.context.trace_id and span.parent.span_id == parent.context.span_id
        )
        linked = {link.context.span_id for link in span.links}
        assert linked == run_spans[conversation_id]
    processor.shutdown()
