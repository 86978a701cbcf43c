"""Conversation scorers, each on a conversation whose right answer is known: the zero-LLM ones
directly, the judged ones against the scripted judge server (one call per conversation per scorer,
one call in all when the judge batches)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from otel_scorers.conversation_turns import Conversation, ToolSummary, Turn
from otel_scorers.conversations.scoring import bind_conversation, score_conversation
from otel_scorers.scorers.conversation import (
    conversation_completeness,
    conversation_relevancy,
    knowledge_retention,
    multi_turn,
    role_adherence,
    tool_error_rate,
    turns,
    user_frustration,
)
from otel_scorers.scorers.judge import Judge

from ..judge_server import JudgeServer, Reply, make_judge

MODEL = "openai/judge-model"


def _turn(n: int, user: str, agent: str, *tools: ToolSummary) -> Turn:
    return Turn(
        "c-1",
        0xABC,
        n,
        start_ns=n,
        end_ns=n + 1,
        agent_name="trip-agent",
        input=user,
        output=agent,
        tools=tools,
    )


TRIP = Conversation(
    "c-1",
    (
        _turn(
            1, "I want a hotel in Lisbon for two nights. I am vegetarian.", "Here are three hotels in Lisbon."
        ),
        _turn(2, "Which of them has a restaurant?", "Hotel Baixa has one, with a vegetarian menu."),
        _turn(3, "Book it, please.", "Booked Hotel Baixa for two nights.", ToolSummary("book", "ok")),
    ),
)


def judge(server: JudgeServer, **options: Any) -> Judge:
    return make_judge(server, model=MODEL, **options)


def _score(scorer: Any, conversation: Conversation = TRIP) -> Any:
    (result,) = asyncio.run(score_conversation([bind_conversation(scorer)], conversation))
    return result


def test_multi_turn_judges_the_whole_conversation_in_one_call(server: JudgeServer) -> None:
    server.then(Reply('{"satisfied": true, "reason": "booked as asked"}'))
    result = _score(multi_turn("The agent booked what the user asked for.", judge=judge(server)))
    assert result.value == 1.0 and result.reason == "booked as asked" and server.calls == 1
    prompt = server.requests[0].text
    assert "Which of them has a restaurant?" in prompt and "Booked Hotel Baixa" in prompt


def test_knowledge_retention_is_the_share_of_later_turns_that_kept_what_the_user_said(
    server: JudgeServer,
) -> None:
    server.then(Reply('{"turns": [2], "reason": "turn 2 ignored the vegetarian diet"}'))
    result = _score(knowledge_retention(judge=judge(server)))
    assert result.value == 0.5 and result.details["failed_turns"] == [2]  # turns 2 and 3 judged, one lapsed


def test_a_judged_turn_number_outside_the_conversation_is_an_invalid_reply(server: JudgeServer) -> None:
    server.then(Reply('{"turns": [7]}'))
    result = _score(conversation_relevancy(judge=judge(server)))
    assert result.value is None and result.error.type == "judge_invalid_response"


def test_completeness_is_the_share_of_requests_fulfilled(server: JudgeServer) -> None:
    reply = {
        "requests": [
            {"request": "a hotel in Lisbon", "fulfilled": True},
            {"request": "a vegetarian restaurant", "fulfilled": True},
            {"request": "an airport transfer", "fulfilled": False},
        ]
    }
    server.then(Reply(json.dumps(reply)))
    result = _score(conversation_completeness(judge=judge(server)))
    assert result.value == 0.67 and result.details["unfulfilled"] == ["an airport transfer"]


def test_conversation_scorers_share_one_judge_call_when_the_judge_batches(server: JudgeServer) -> None:
    shared = judge(server, batch=True)
    bindings = [
        bind_conversation(multi_turn("The booking was made.", judge=shared)),
        bind_conversation(role_adherence("a travel agent", judge=shared)),
        bind_conversation(conversation_relevancy(judge=shared)),
    ]
    server.then(
        Reply(
            json.dumps(
                {
                    "multi_turn": {"satisfied": True, "reason": "booked"},
                    "role_adherence": {"turns": [], "reason": "in role"},
                    "conversation_relevancy": {"turns": [3], "reason": "turn 3 off"},
                }
            )
        )
    )
    results = {score.scorer: score for score in asyncio.run(score_conversation(bindings, TRIP))}
    assert server.calls == 1
    assert results["multi_turn"].value == 1.0
    assert results["role_adherence"].value == 1.0
    assert results["conversation_relevancy"].value == 0.67  # one of three turns off topic


def test_user_frustration_counts_the_turns_that_ask_again_for_an_earlier_request() -> None:
    conversation = Conversation(
        "c-2",
        (
            _turn(1, "What is the weather in Paris tomorrow?", "I can check the news."),
            _turn(2, "Tell me a joke", "Why did the chicken..."),
            _turn(3, "what's the weather in Paris tomorrow", "Paris will be sunny."),
        ),
    )
    result = _score(user_frustration(), conversation)
    assert result.value == 0.5 and result.details["repeated_turns"] == [3]
    assert _score(user_frustration(), TRIP).value == 0.0


def test_tool_error_rate_spans_every_turn_and_turns_counts_them() -> None:
    conversation = Conversation(
        "c-3",
        (
            _turn(1, "a", "b", ToolSummary("search", "ok"), ToolSummary("search", "error", "timeout")),
            _turn(2, "c", "d", ToolSummary("book", "incomplete")),
            _turn(3, "e", "f", ToolSummary("book", "ok")),
        ),
        trimmed=2,
    )
    assert _score(tool_error_rate(), conversation).value == 0.5
    assert _score(turns(), conversation).value == 5  # the two trimmed turns count
    assert _score(tool_error_rate(), Conversation("c-4", (_turn(1, "a", "b"),))).skipped
