"""Each convention's conversation id, read from where its framework writes it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from otel_scorers.runs.conversation_id import CONVERSATION_KEYS, conversation_id_of

from ..spans import only_run, span


def _genai_run(**attributes: Any) -> Any:
    root = span(
        "invoke_agent trip", gen_ai__operation__name="invoke_agent", gen_ai__agent__name="trip", **attributes
    )
    return only_run([root])


@pytest.mark.parametrize(
    "key",
    [key for key, _ in CONVERSATION_KEYS],
)
def test_every_listed_key_names_the_runs_conversation(key: str) -> None:
    run = _genai_run(**{key.replace(".", "__"): "conv-7"})
    assert run.conversation_id == "conv-7"


def test_openinference_session_id_on_an_agent_span() -> None:
    root = span(
        "agent", openinference__span__kind="AGENT", session__id="s-1", input__value="hi", output__value="yo"
    )
    assert only_run([root]).conversation_id == "s-1"


def test_langgraph_thread_id_in_openinference_metadata() -> None:
    metadata = json.dumps({"thread_id": "thread-42", "langgraph_step": 1})
    root = span(
        "LangGraph",
        openinference__span__kind="AGENT",
        metadata=metadata,
        input__value="hi",
        output__value="yo",
    )
    assert only_run([root]).conversation_id == "thread-42"


def test_vercel_metadata_session_id() -> None:
    root = span(
        "ai.generateText",
        scope="ai",
        ai__operationId="ai.generateText",
        ai__telemetry__functionId="trip",
        ai__telemetry__metadata__sessionId="chat-9",
        ai__response__text="yo",
    )
    assert only_run([root]).conversation_id == "chat-9"


def test_the_conventions_own_key_wins_over_the_fallbacks() -> None:
    run = _genai_run(gen_ai__conversation__id="primary", session__id="secondary")
    assert run.conversation_id == "primary"


def test_a_run_without_any_key_has_no_conversation() -> None:
    assert _genai_run().conversation_id is None
    assert conversation_id_of({"metadata": "{not json"}) is None
    assert conversation_id_of({"session.id": "   "}) is None
