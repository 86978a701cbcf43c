"""What AutoGen writes the same whichever instrumentation records it (its model messages, its
AgentChat messages, an agent's `Response`) is read by the shared rules, and a run named only by
its own span takes the name of the agent span wrapping it, on traces captured from real packages
(tests/fixtures/traces/mlflow-autogen: MLflow's AutoGen autolog beside autogen-core's own spans)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from otel_scorers import conventions
from otel_scorers.conventions.formats.genai_events import listed_messages
from otel_scorers.runs.run_text import FROM_STRUCTURE
from tests.runs.fixture_runs import attribute_values, runs_of

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
CORPUS = "mlflow-autogen"


def test_autogen_s_model_messages_are_read_by_their_class_with_their_calls_and_results() -> None:
    # The second model call of the failing scenario was sent the failed call and its error.
    _, second = attribute_values(
        CORPUS, "failing_tool", "OpenAIChatCompletionClient.create", "mlflow.spanInputs"
    )
    messages = listed_messages(json.loads(second)["messages"], "user").items
    assert [message["role"] for message in messages] == ["system", "user", "assistant", "tool"]
    assert messages[2]["parts"] == [
        {"type": "tool_call", "id": "call_0009", "name": "get_weather", "arguments": {"city": "Paris"}}
    ]
    assert messages[3]["parts"] == [
        {
            "type": "tool_call_response",
            "id": "call_0009",
            "response": "weather service unavailable",
            "error": True,
        }
    ]


def test_a_tool_call_autogen_core_records_without_its_result_gets_the_result_the_model_was_sent() -> None:
    (run,) = runs_of(CORPUS, "two_tools")
    assert [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok"),
        ("get_time", {"city": "Paris"}, "14:05", "ok"),
    ]
    writer, reviewer = runs_of(CORPUS, "round_robin")
    assert [(call.name, call.result) for call in writer.tool_calls] == [("get_weather", "Sunny, 21°C")]
    assert reviewer.tool_calls == ()


def test_an_autogen_agent_s_response_answers_with_its_chat_message() -> None:
    (run,) = runs_of(CORPUS, "no_tool")
    assert (run.input, run.output) == ("Say hello in French.", "Bonjour !")
    assert run.text_sources["output"] == FROM_STRUCTURE


def test_mlflow_names_an_autogen_agent_s_turn_after_the_agent_not_the_method_it_traced() -> None:
    (run,) = runs_of(CORPUS, "tool_then_answer")
    assert (run.agent_name, run.output) == ("weather_agent", "It is sunny and 21°C in Paris.")


#: MLflow's spans described as a user who knows nothing of AutoGen would: an AGENT span is a run,
#: named by its span's name (`weather_agent.on_messages`).
_BY_SPAN_NAME = {
    "name": "traced-methods",
    "scope": "mlflow.tracing.provider",
    "json_values": True,
    "run": {
        "when": {"attributes": {"mlflow.spanType": "AGENT"}},
        "agent_name": {"span": "name"},
        "input": "mlflow.spanInputs",
        "output": "mlflow.spanOutputs",
    },
}


@pytest.fixture
def described_by_span_name() -> Iterator[None]:
    conventions.use_descriptions([_BY_SPAN_NAME])
    yield
    conventions.use_descriptions(())


@pytest.mark.usefixtures("described_by_span_name")
def test_a_run_named_only_by_its_span_takes_the_name_of_the_agent_span_wrapping_it() -> None:
    # autogen-core's `invoke_agent weather_agent` wraps the traced `weather_agent.on_messages`.
    (run,) = runs_of(CORPUS, "tool_then_answer")
    assert (run.convention, run.agent_name) == ("traced-methods", "weather_agent")
