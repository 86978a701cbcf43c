"""Conversations through the public path: the in-process processor, real SDK spans, a fake clock."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from typing import Any

import pytest

from otel_scorers import ScoringSpanProcessor
from otel_scorers.conversation_turns import MAX_CONVERSATION_ID
from otel_scorers.conversations.scoring import bind_conversation
from otel_scorers.conversations.source import ConversationSettings
from otel_scorers.conversations.stage import StageLimits
from otel_scorers.demos.example_agent import ExampleAgent, ScriptedRun
from otel_scorers.scorers.conversation import tool_error_rate, turns
from tests.conftest import Telemetry
from tests.spans import conversation_turn
from tests.waiting import FakeClock

IDLE_S = 300.0


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


@pytest.mark.parametrize(("at_shutdown", "scored"), [("score", 3), ("drop", 0)])
def test_at_shutdown_open_conversations_are_scored_or_dropped_and_counted(
    telemetry: Telemetry, at_shutdown: str, scored: int
) -> None:
    clock = FakeClock()
    processor = _processor(telemetry, clock, sampling=1.0, at_shutdown=at_shutdown)
    tracer = telemetry.tracer_provider.get_tracer("agent")
    for conversation in ("a", "b", "c"):
        conversation_turn(tracer, conversation, "hello")
    processor.shutdown(5.0)
    spans = [s for s in _conversation_spans(telemetry) if s.attributes["gen_ai.evaluation.name"] == "turns"]
    assert len(spans) == scored
    assert all(s.attributes["otel_scorers.conversation.ended_by"] == "shutdown" for s in spans)
    dropped = telemetry.counter("otel_scorers.conversations", otel_scorers__outcome="dropped_shutdown")
    assert dropped == 3 - scored


def test_a_config_files_end_predicate_ends_the_conversation_without_waiting(
    telemetry: Telemetry, tmp_path: Any
) -> None:
    path = tmp_path / "scorers.yaml"
    path.write_text(
        "conversations:\n"
        "  idle_timeout_s: 600\n"
        "  end_when: {op: truthy, left: {path: attributes.app.goodbye}}\n"
        "  scorers:\n"
        "    - type: turns\n"
        "    - type: user_frustration\n"
        "      threshold: 0.5\n"
    )
    processor = ScoringSpanProcessor.from_config(path, **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    telemetry.export_spans_directly()
    tracer = telemetry.tracer_provider.get_tracer("agent")
    conversation_turn(tracer, "c-1", "Where is my parcel?")
    conversation_turn(tracer, "c-1", "where is my parcel??")
    conversation_turn(tracer, "c-1", "thanks, bye", **{"app.goodbye": True})
    assert processor.force_flush()
    spans = {s.attributes["gen_ai.evaluation.name"]: s for s in _conversation_spans(telemetry)}
    assert spans["turns"].attributes["gen_ai.evaluation.score.value"] == 3
    assert spans["turns"].attributes["otel_scorers.conversation.ended_by"] == "end_marker"
    frustration = spans["user_frustration"].attributes
    assert (
        frustration["gen_ai.evaluation.score.value"] == 0.5
        and frustration["gen_ai.evaluation.score.label"] == "pass"
    )
    (event,) = [e for e in telemetry.events() if e.log_record.attributes["gen_ai.evaluation.name"] == "turns"]
    assert event.log_record.attributes["gen_ai.conversation.id"] == "c-1"
    assert event.log_record.span_id == spans["turns"].parent.span_id
    # Metrics by scorer and agent, never by conversation.
    points = telemetry.metric_points("gen_ai.evaluation.score")
    assert points and all("gen_ai.conversation.id" not in p.attributes for p in points)
    assert {p.attributes.get("gen_ai.agent.name") for p in points} == {"trip"}
    processor.shutdown()


def test_a_conversation_scorer_listed_among_run_scorers_is_a_config_error() -> None:
    from otel_scorers.config import parse_config
    from otel_scorers.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        parse_config({"scorers": [{"type": "multi_turn", "args": {"criterion": "x"}}]})
    assert "conversations.scorers" in str(caught.value)


def test_with_turn_records_each_run_of_a_sampled_conversation_goes_out_as_a_log_record(
    telemetry: Telemetry,
) -> None:
    conversations = ConversationSettings(turn_records=True)  # no scorers here: a sidecar scores
    processor = ScoringSpanProcessor([], conversations=conversations, **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    tracer = telemetry.tracer_provider.get_tracer("agent")
    conversation_turn(tracer, "c-9", "first")
    conversation_turn(tracer, "c-9", "second")
    with tracer.start_as_current_span(
        "invoke_agent trip", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        pass  # a run of no conversation: no record
    assert processor.force_flush()
    records = telemetry.events("otel_scorers.conversation.turn")
    assert [r.log_record.attributes["otel_scorers.turn.input"] for r in records] == ["first", "second"]
    assert {r.log_record.attributes["gen_ai.conversation.id"] for r in records} == {"c-9"}
    processor.shutdown()


def test_a_long_conversation_id_is_emitted_bounded_ids_stay_apart_and_each_cut_is_counted(
    telemetry: Telemetry,
) -> None:
    processor = _processor(telemetry, FakeClock(), sampling=1.0)
    tracer = telemetry.tracer_provider.get_tracer("agent")
    long_ids = ["z" * 100_000 + "-a", "z" * 100_000 + "-b"]
    for long_id in long_ids:
        conversation_turn(tracer, long_id, "hello")
    processor.shutdown(5.0)
    spans = [s for s in _conversation_spans(telemetry) if s.attributes["gen_ai.evaluation.name"] == "turns"]
    emitted = {str(span.attributes["gen_ai.conversation.id"]) for span in spans}
    assert len(emitted) == 2 and all(len(each) == MAX_CONVERSATION_ID for each in emitted)
    assert all(each.startswith("z" * 200) for each in emitted)
    assert telemetry.counter("otel_scorers.conversations", otel_scorers__outcome="id_cut") == 2


class HangingScorer:
    """A conversation scorer whose judge never answers."""

    name = "hangs"
    uses_judge = True

    async def score(self, conversation: Any) -> Any:
        await asyncio.Event().wait()


def _open_conversations(telemetry: Telemetry, binding: Any, count: int) -> ScoringSpanProcessor:
    settings = ConversationSettings(
        bindings=(binding,), limits=StageLimits(idle_timeout_s=IDLE_S), clock=FakeClock(), tick_s=3600
    )
    processor = ScoringSpanProcessor([], conversations=settings, **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    telemetry.export_spans_directly()
    tracer = telemetry.tracer_provider.get_tracer("agent")
    for n in range(count):
        conversation_turn(tracer, f"open-{n}", "hello")
        if n % 500 == 0:
            processor.force_flush()  # the engine's queue is bounded too
    assert processor.force_flush()
    return processor


def _outcomes(telemetry: Telemetry) -> Counter[str]:
    return Counter(
        {
            outcome: int(telemetry.counter("otel_scorers.conversations", otel_scorers__outcome=outcome))
            for outcome in ("scored", "waiting_full", "dropped_shutdown")
        }
    )


OPEN = 6000  # more than the scheduler keeps waiting (4,096)


def test_at_shutdown_score_scores_every_open_conversation_the_timeout_has_time_for(
    telemetry: Telemetry,
) -> None:
    processor = _open_conversations(telemetry, bind_conversation(turns()), OPEN)
    processor.shutdown(120.0)
    assert _outcomes(telemetry) == Counter({"scored": OPEN})
    assert len(_conversation_spans(telemetry)) == OPEN


def test_conversations_a_shutdown_cuts_off_are_each_counted_once(telemetry: Telemetry) -> None:
    processor = _open_conversations(telemetry, bind_conversation(HangingScorer(), timeout_s=600), OPEN)
    started = time.monotonic()
    processor.shutdown(1.0)
    # The timeout, then the scheduler's thread join (a few seconds): it did not wait for the
    # scorers' ten minutes (a guard far from both).
    assert time.monotonic() - started < 60.0
    assert _outcomes(telemetry) == Counter({"dropped_shutdown": OPEN})
