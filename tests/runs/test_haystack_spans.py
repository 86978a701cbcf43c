"""Haystack's own tracing (`haystack.agent.run` and its steps) is read from a shipped description,
Langfuse's Haystack integration by Langfuse's, and what Haystack writes the same whichever
instrumentation records it (its messages as `ChatMessage.to_dict()`, a failed tool's
`{"error": ...}` and its failure text) by the shared rules, on traces captured from real packages
(tests/fixtures/traces/haystack-builtin, langfuse-haystack)."""

from __future__ import annotations

import json
from pathlib import Path

from otel_scorers.conventions.formats.genai_events import listed_messages
from tests.runs.fixture_runs import attribute_values, runs_of

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


def test_haystack_s_own_agent_span_is_one_run_named_by_its_class_with_its_request_and_answer() -> None:
    (run,) = runs_of("haystack-builtin", "tool_then_answer")
    assert (run.convention, run.agent_name) == ("haystack", "Agent")
    assert (run.input, run.output) == ("What is the weather in Paris?", "It is sunny and 21°C in Paris.")
    assert [(call.name, call.arguments, call.result) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C")
    ]
    # Two calls of the scripted model, each reporting 20 prompt and 10 completion tokens.
    assert (run.models, run.usage.input_tokens, run.usage.output_tokens) == (("gpt-4o-mini",), 40, 20)


def test_agents_in_a_haystack_pipeline_are_named_by_the_component_span_around_them() -> None:
    runs = runs_of("haystack-builtin", "two_agents_in_pipeline")
    assert [run.agent_name for run in runs] == ["weather_agent", "time_agent"]


def test_an_agent_a_haystack_tool_runs_is_named_by_that_tool() -> None:
    outer, inner = runs_of("haystack-builtin", "nested")
    assert (outer.agent_name, inner.agent_name) == ("Agent", "weather_agent")


def test_tool_calls_and_results_in_haystack_s_serialized_messages_are_read_as_parts() -> None:
    conversation = json.loads(
        first_attribute("haystack-builtin", "failing_tool", "haystack.agent.run", "haystack.agent.output")
    )
    parts = [
        part
        for message in listed_messages(conversation["messages"], "user").items
        for part in message["parts"]
    ]
    calls = [part for part in parts if part["type"] == "tool_call"]
    responses = [part for part in parts if part["type"] == "tool_call_response"]
    assert [(call["name"], call["arguments"]) for call in calls] == [("get_weather", {"city": "Paris"})]
    assert [(response["id"], response.get("error")) for response in responses] == [(calls[0]["id"], True)]


def test_a_haystack_tool_s_error_object_sent_to_the_model_as_a_failure_is_a_failed_call() -> None:
    (run,) = runs_of("haystack-builtin", "failing_tool")
    (call,) = run.tool_calls
    assert (call.name, call.state, call.result) == ("get_weather", "error", None)
    assert call.error is not None and "weather service unavailable" in call.error


def test_a_haystack_agent_under_langfuse_is_named_as_haystack_names_it_with_one_call_per_tool_run() -> None:
    (alone,) = runs_of("langfuse-haystack", "tool_then_answer")
    (in_pipeline,) = runs_of("langfuse-haystack", "in_pipeline")
    outer, inner = runs_of("langfuse-haystack", "nested")
    assert [run.agent_name for run in (alone, in_pipeline, outer, inner)] == [
        "Agent",
        "weather_agent",
        "Agent",
        "weather_agent",
    ]
    assert [(call.name, call.arguments, call.result) for call in alone.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C")
    ]


def test_a_chat_completions_tool_message_is_the_response_to_its_call() -> None:
    # The second model call was sent the tool's result as a chat-completions `tool` message.
    sent = json.loads(
        final_attribute("langfuse-haystack", "tool_then_answer", "llm", "langfuse.observation.input")
    )
    tool_messages = [m for m in listed_messages(sent["messages"], "user").items if m["role"] == "tool"]
    assert [message["parts"] for message in tool_messages] == [
        [{"type": "tool_call_response", "id": "call_0001", "response": "Sunny, 21°C"}]
    ]


def test_haystack_s_failure_text_sent_to_the_model_makes_the_call_failed_under_langfuse() -> None:
    (run,) = runs_of("langfuse-haystack", "failing_tool")
    (call,) = run.tool_calls
    assert (call.name, call.state, call.result) == ("get_weather", "error", None)
    assert call.error is not None and "weather service unavailable" in call.error


def test_an_agent_run_as_a_tool_returned_the_answer_the_model_was_sent_not_its_whole_state() -> None:
    # Langfuse records the tool's output as the agent's state (`{"messages": [...], ...}`); the
    # calling model was sent its last assistant message.
    outer, inner = runs_of("langfuse-haystack", "nested")
    assert [(call.name, call.result) for call in outer.tool_calls] == [
        ("weather_agent", "Sunny and 21°C in Paris.")
    ]
    assert inner.output == "Sunny and 21°C in Paris."


def test_haystack_s_spans_are_read_under_a_tracer_of_any_scope_by_the_tags_haystack_writes() -> None:
    # MLflow's Haystack autolog records Haystack's own spans (the same names and tags) under its
    # scope `mlflow.haystack.autolog`, each span exported twice.
    assert first_attribute(
        "mlflow-haystack", "tool_then_answer", "haystack.agent.run", "mlflow.traceRequestId"
    )
    (run,) = runs_of("mlflow-haystack", "tool_then_answer")
    assert (run.convention, run.agent_name) == ("haystack", "Agent")
    assert (run.input, run.output) == ("What is the weather in Paris?", "It is sunny and 21°C in Paris.")
    assert [(call.name, call.arguments, call.result) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C")
    ]
    # Two calls of the scripted model (20 prompt and 10 completion tokens each), each counted once.
    assert (run.models, run.usage.input_tokens, run.usage.output_tokens) == (("gpt-4o-mini",), 40, 20)
    # The pipeline's component span around an agent names it, whatever the tracer's scope.
    assert [run.agent_name for run in runs_of("mlflow-haystack", "two_agents_in_pipeline")] == [
        "weather_agent",
        "time_agent",
    ]


def test_a_model_input_haystack_wrote_as_its_python_repr_is_read_as_its_messages() -> None:
    # With an `AgentTool` among the tools Haystack cannot serialise the model's input: its tracer
    # writes the input's `str()`, `ChatMessage` reprs beside a tool's `<function ...>`.
    sent = final_attribute(
        "haystack-builtin", "nested", "haystack.agent.step.llm", "haystack.agent.step.llm.input"
    )
    assert sent.startswith("{'messages': [ChatMessage(") and "<function " in sent
    messages = listed_messages(sent, "user")
    assert messages.captured
    assert [message["role"] for message in messages.items] == ["system", "user", "assistant", "tool"]
    assert messages.items[-1]["parts"] == [
        {"type": "tool_call_response", "id": "call_0016", "response": "Sunny and 21°C in Paris."}
    ]


def test_an_agent_run_as_a_tool_returned_the_answer_its_caller_s_model_was_sent_under_any_haystack_tracer() -> (
    None
):
    # The tool span records the inner agent's whole state; its caller's model, whose input is a
    # Python repr, was sent the answer.
    for corpus in ("haystack-builtin", "mlflow-haystack"):
        outer, inner = runs_of(corpus, "nested")
        assert [(call.name, call.result) for call in outer.tool_calls] == [
            ("weather_agent", "Sunny and 21°C in Paris.")
        ], corpus
        assert inner.output == "Sunny and 21°C in Paris."


def first_attribute(corpus: str, scenario: str, span_name: str, key: str) -> str:
    return attribute_values(corpus, scenario, span_name, key)[0]


def final_attribute(corpus: str, scenario: str, span_name: str, key: str) -> str:
    return attribute_values(corpus, scenario, span_name, key)[-1]


def test_a_haystack_pipeline_openllmetry_traces_is_not_a_run_its_agents_runs_are_joined_from_their_calls() -> (
    None
):
    # OpenLLMetry writes one `haystack_pipeline.workflow` span around every component's model
    # calls and no span of an agent: two agents in the pipeline are two runs, not one run of the
    # pipeline answering "replies" (the name of the generator's output, which is all it records).
    first, second = runs_of("openllmetry-haystack", "two_agents_in_pipeline")
    assert (first.input, first.output) == ("What is the weather in Paris?", "It is sunny and 21°C in Paris.")
    assert [(call.name, call.result) for call in first.tool_calls] == [("get_weather", "Sunny, 21°C")]
    assert (second.output, [call.name for call in second.tool_calls]) == (
        "It is 14:05 in Paris.",
        ["get_time"],
    )
    # The pipeline names no agent: the runs' agents are missing, not guessed.
    assert first.agent_name is None and "agent_name" in first.missing
