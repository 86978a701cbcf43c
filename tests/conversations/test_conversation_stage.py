"""The conversation stage's rules: sampling by conversation, ends, bounds, each with a fake clock."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tracemalloc
from collections import Counter
from collections.abc import Callable

import pytest

from otel_scorers.conversation_turns import MAX_CONVERSATION_ID, Turn, turn_of
from otel_scorers.conversations.stage import ConversationSampler, ConversationStage, StageLimits
from otel_scorers.model import AgentRun
from tests.waiting import FakeClock

IDS = [f"session-{n}" for n in range(2000)]


def _stage(**limits: float) -> tuple[ConversationStage, FakeClock, Counter[str]]:
    clock = FakeClock()
    counted: Counter[str] = Counter()
    stage = ConversationStage(
        StageLimits(**limits),  # type: ignore[arg-type]
        ConversationSampler(1.0),
        clock,
        lambda outcome, n: counted.update({outcome: n}),
    )
    return stage, clock, counted


def _turn(conversation: str, n: int, text: str = "", ends: bool = False) -> Turn:
    return Turn(conversation, 1, n, start_ns=n, end_ns=n + 1, input=text, output=text, ends_conversation=ends)


def test_a_lower_rate_keeps_a_subset_of_a_higher_ones_conversations() -> None:
    tenth = {c for c in IDS if ConversationSampler(0.1).sampled(c)}
    half = {c for c in IDS if ConversationSampler(0.5).sampled(c)}
    assert tenth < half
    assert 140 <= len(tenth) <= 260 and 900 <= len(half) <= 1100
    assert all(ConversationSampler(1.0).sampled(c) for c in IDS)
    assert not any(ConversationSampler(0.0).sampled(c) for c in IDS)


def test_every_process_samples_the_same_conversations_whatever_its_hash_seed() -> None:
    program = (
        "from otel_scorers.conversations.stage import ConversationSampler;"
        "s = ConversationSampler(0.1);"
        f"print(','.join(c for c in {IDS[:300]!r} if s.sampled(c)))"
    )
    here = ",".join(c for c in IDS[:300] if ConversationSampler(0.1).sampled(c))
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == here


def test_a_conversation_ends_when_idle_for_the_timeout_and_not_before() -> None:
    stage, clock, _ = _stage(idle_timeout_s=60)
    stage.add(_turn("a", 1))
    clock.now = 50
    stage.add(_turn("a", 2))
    clock.now = 109
    assert stage.close_due() == []
    clock.now = 110
    (ended,) = stage.close_due()
    assert ended.ended_by == "idle" and [t.span_id for t in ended.turns] == [1, 2]
    assert stage.close_due() == [] and stage.open_count == 0


def test_max_duration_max_turns_and_the_end_marker_each_end_a_conversation() -> None:
    stage, clock, _ = _stage(idle_timeout_s=60, max_duration_s=100, max_turns=5)
    for n in range(5):
        stage.add(_turn("busy", 20 + n))
    for n in range(3):
        stage.add(_turn("long", 10 + n))  # at 0, 40, 80: never idle for 60
        clock.now += 40
    stage.add(_turn("marked", 30, ends=True))
    clock.now = 110
    reasons = {c.id: c.ended_by for c in stage.close_due()}
    assert reasons == {"busy": "max_turns", "marked": "end_marker", "long": "max_duration"}


def test_trimming_keeps_the_first_and_the_latest_turns_and_records_how_many_were_left_out() -> None:
    stage, _, counted = _stage(max_turns_kept=3)
    for n in range(1, 7):
        stage.add(_turn("a", n))
    (ended,) = stage.close_all("shutdown")
    assert [t.span_id for t in ended.turns] == [1, 5, 6]
    assert ended.trimmed == 3 and ended.turn_count == 6 and counted["trimmed_turn"] == 3


def test_beyond_max_open_the_least_recently_active_conversation_is_evicted_and_counted() -> None:
    stage, clock, counted = _stage(max_open=2)
    stage.add(_turn("a", 1))
    clock.now = 1
    stage.add(_turn("b", 2))
    clock.now = 2
    stage.add(_turn("a", 3))  # a is now the more recent
    stage.add(_turn("c", 4))
    assert sorted(c.id for c in stage.close_all("shutdown")) == ["a", "c"] and counted["evicted"] == 1


def test_beyond_max_bytes_conversations_are_evicted_until_the_rest_fit() -> None:
    stage, _, counted = _stage(max_bytes=4000)
    for n in range(5):
        stage.add(_turn(f"c{n}", n, "x" * 500))  # about 1900 bytes each, the conversation's own included
    assert stage.bytes <= 4000 and stage.open_count == 2 and counted["evicted"] == 3


def test_a_resent_turn_is_kept_once() -> None:
    stage, _, counted = _stage()
    stage.add(_turn("a", 1))
    stage.add(_turn("a", 1))
    (ended,) = stage.close_all("shutdown")
    assert len(ended.turns) == 1 and counted["duplicate_turn"] == 1


def test_turns_arriving_out_of_order_are_kept_in_start_order() -> None:
    stage, _, _ = _stage()
    for n in (3, 1, 2):
        stage.add(_turn("a", n))
    (ended,) = stage.close_all("shutdown")
    assert [t.span_id for t in ended.turns] == [1, 2, 3]


@pytest.mark.parametrize("limits", [{"max_turns_kept": 1}, {"idle_timeout_s": 0}, {"max_open": 0}])
def test_limits_that_cannot_work_are_refused(limits: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        StageLimits(**limits)  # type: ignore[arg-type]


def _held(fill: Callable[[], None]) -> int:
    """What `fill` leaves allocated (bytes, by tracemalloc), what it let go of collected."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        fill()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_a_runs_long_conversation_id_is_bounded_counted_and_charged_to_max_bytes() -> None:
    stage, _, counted = _stage(max_open=10_000, max_bytes=1 << 40)

    def fill() -> None:
        for n in range(2000):  # 2,000 conversations, each id 100 kB
            long_id = f"{n:06d}" + "x" * 100_000
            run = AgentRun(1, n + 1, "trip", "hi", "yo", start_ns=n, end_ns=n + 1, conversation_id=long_id)
            turn = turn_of(run)
            assert turn is not None
            stage.add(turn)

    held = _held(fill)
    assert counted["id_cut"] == 2000 and stage.open_count == 2000  # distinct ids stay apart
    assert held <= stage.bytes, (held, stage.bytes)  # what the stage holds, it counts
    assert stage.bytes < 4_000_000  # not the 200 MB of the ids whole
    ended = stage.close_all("shutdown")
    assert all(len(conversation.id) == MAX_CONVERSATION_ID for conversation in ended)


def test_the_span_ids_of_trimmed_turns_are_charged_to_max_bytes() -> None:
    stage, _, counted = _stage(max_turns=10**6, max_turns_kept=50, max_bytes=1 << 40)

    def fill() -> None:
        for n in range(100_000):
            stage.add(_turn("long", n))

    held = _held(fill)
    assert counted["trimmed_turn"] == 100_000 - 50
    assert held <= stage.bytes, (held, stage.bytes)  # 100k span ids remembered, and counted
    stage.add(_turn("long", 7))  # and still a resent turn is kept once
    assert counted["duplicate_turn"] == 1
