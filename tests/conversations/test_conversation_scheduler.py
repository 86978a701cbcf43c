"""The conversation scheduler runs on the loop that scores the runs: one event loop for all judge work
in a process (litellm keeps one logging worker per process, tied to one loop)."""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field

import pytest

from otel_scorers import AgentRun, ScoringSpanProcessor, bind
from otel_scorers.conversation_turns import Conversation, Turn
from otel_scorers.conversations.scoring import bind_conversation
from otel_scorers.conversations.source import Conversations, ConversationSettings
from otel_scorers.conversations.stage import StageLimits
from otel_scorers.emission import standard_emission
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.model import Score
from tests.conftest import Telemetry
from tests.spans import conversation_turn
from tests.waiting import wait_until


@dataclass
class LoopsSeen:
    """Where each awaitable scorer ran: (thread name, loop id)."""

    places: set[tuple[str, int]] = field(default_factory=set)

    def note(self) -> None:
        self.places.add((threading.current_thread().name, id(asyncio.get_running_loop())))


@dataclass
class AsyncConversationScorer:
    seen: LoopsSeen
    name: str = "awaited"
    uses_judge: bool = True

    async def score(self, conversation: Conversation) -> Score:
        self.seen.note()
        await asyncio.sleep(0)
        return Score(self.name, value=float(conversation.turn_count))


def test_conversations_are_judged_on_the_loop_that_scores_the_runs(telemetry: Telemetry) -> None:
    seen = LoopsSeen()

    async def run_judge(run: AgentRun) -> float:
        seen.note()
        await asyncio.sleep(0)
        return 1.0

    settings = ConversationSettings(bindings=(bind_conversation(AsyncConversationScorer(seen)),), tick_s=3600)
    processor = ScoringSpanProcessor(
        [bind(run_judge, name="judged", uses_judge=True)], conversations=settings, **telemetry.providers()
    )
    telemetry.tracer_provider.add_span_processor(processor)
    tracer = telemetry.tracer_provider.get_tracer("agent")
    conversation_turn(tracer, "c-1", "first")
    conversation_turn(tracer, "c-1", "second")
    assert processor.force_flush()
    processor.shutdown()  # the conversation, still open, is scored at shutdown
    assert telemetry.counter("gen_ai.evaluation.results", gen_ai__evaluation__name="awaited") == 1
    assert telemetry.counter("gen_ai.evaluation.results", gen_ai__evaluation__name="judged") == 2
    assert len(seen.places) == 1, seen.places  # one thread, one loop, for both
    ((thread, _),) = seen.places
    assert thread == "otel-scorers"


def test_a_turn_that_comes_after_shutdown_is_counted(telemetry: Telemetry) -> None:
    metrics = PipelineMetrics(telemetry.meter_provider)
    emission = standard_emission(metrics, tracer_provider=telemetry.tracer_provider)
    settings = ConversationSettings(bindings=(bind_conversation(AsyncConversationScorer(LoopsSeen())),))
    conversations = Conversations(settings, metrics, emission)  # a scheduler with a loop of its own
    conversations.add_turns([Turn("c-1", 1, 2, 1, 2, "trip", "hi", "hello", (), "ok")])
    conversations.shutdown(5)
    conversations.add_turns([Turn("c-1", 1, 3, 3, 4, "trip", "again", "hello", (), "ok")])
    assert conversations.counts is not None
    assert conversations.counts.totals == {"closed": 1, "scored": 1, "turn_after_shutdown": 1}


def test_run_and_conversation_judges_of_one_config_are_one_judge() -> None:
    from otel_scorers.config import parse_config

    config = parse_config(
        {
            "scorers": [{"type": "answer_relevancy"}],
            "judge": {"model": "openai/test-judge", "api_base": "http://127.0.0.1:9", "api_key": "k"},
            "conversations": {"scorers": [{"type": "multi_turn", "args": {"criterion": "resolved"}}]},
        }
    )
    bindings, conversations = config.scoring()
    assert conversations is not None
    (run_binding,) = bindings
    (conversation_binding,) = conversations.bindings
    # One concurrency limit, cost budget and cache for all judge work.
    assert run_binding.scorer.judge is conversation_binding.scorer.judged.judge  # type: ignore[attr-defined]


@dataclass
class NeverAnswers:
    """A judged conversation scorer whose judge never answers: the scheduler fills up."""

    name: str = "never"
    uses_judge: bool = True

    async def score(self, conversation: Conversation) -> Score:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def test_conversations_past_a_full_lane_are_counted_and_logged(
    telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    metrics = PipelineMetrics(telemetry.meter_provider)
    emission = standard_emission(metrics, tracer_provider=telemetry.tracer_provider)
    settings = ConversationSettings(
        bindings=(bind_conversation(NeverAnswers()),), limits=StageLimits(max_turns=1), tick_s=0.01
    )
    conversations = Conversations(settings, metrics, emission)
    # The scheduler scores 32 at a time and keeps 4,096 more waiting: 100 beyond that find it full.
    ended = 32 + 4096 + 100
    with caplog.at_level(logging.WARNING, logger="otel_scorers"):
        conversations.add_turns(
            [Turn(f"c-{n}", 1, n + 2, 1, 2, "trip", "hi", "hello", (), "ok") for n in range(ended)]
        )
        assert conversations.counts is not None
        wait_until(
            lambda: conversations.counts.totals.get("closed", 0) == ended, 60, "every conversation closed"
        )  # type: ignore[union-attr]
        conversations.shutdown(0.5)
    assert conversations.counts.totals["waiting_full"] == 100
    full = [
        record.getMessage() for record in caplog.records if "already wait to be scored" in record.getMessage()
    ]
    assert len(full) == 1, full  # throttled: once, then a count a minute
    assert "4128 conversations already wait to be scored" in full[0]
