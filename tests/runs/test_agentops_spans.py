"""What AgentOps' SDK (`descriptions/agentops.yaml`) holds over the OpenAI Agents SDK, read on
traces captured under agentops 0.4 (tests/fixtures/traces/agentops-openai-agents): the request
as one indexed prompt holding the conversation, and the answer on the OpenAI client's span beside
the agent's (`runs/displaced_layers.py`)."""

from __future__ import annotations

import json

from .fixture_runs import attribute_values, runs_of

CORPUS = "agentops-openai-agents"


def test_one_indexed_prompt_holding_the_conversation_is_that_conversation() -> None:
    (prompt,) = attribute_values(CORPUS, "no_tool", "generation", "gen_ai.prompt.0.content")
    assert [message["role"] for message in json.loads(prompt)] == ["system", "user"]
    (run,) = runs_of(CORPUS, "no_tool")
    assert run.input == "Say hello in French."
    assert [message["role"] for message in run.input_messages][:2] == ["system", "user"]


def test_the_client_s_span_beside_the_run_completes_the_call_it_lies_within() -> None:
    # The SDK's `generation` span holds no answer; the OpenAI client's span of the same call sits
    # under the trace's root, beside the agent's span, and holds it.
    assert (
        attribute_values(CORPUS, "tool_then_answer", "generation", "gen_ai.response.model")
        == ["gpt-5.6-luna"] * 2
    )
    assert attribute_values(
        CORPUS, "tool_then_answer", "openai.chat.completion", "gen_ai.completion.0.content"
    ) == ["It is sunny and 21°C in Paris."]
    (run,) = runs_of(CORPUS, "tool_then_answer")
    assert run.output == "It is sunny and 21°C in Paris."
    # Two calls, each counted once: the client's spans are their lower layers, not calls of their own.
    assert (run.usage.input_tokens, run.usage.output_tokens) == (40, 20)


def test_a_handoff_span_joins_the_agents_into_one_run() -> None:
    (run,) = runs_of(CORPUS, "handoff_after_tool")
    assert (run.agent_name, run.final_agent) == ("triage_agent", "weather_agent")
    assert [call.name for call in run.tool_calls] == ["get_time", "get_weather"]
    assert run.output == "It is 14:05 in Paris, and it is sunny and 21°C."
