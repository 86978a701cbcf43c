"""A span may carry the keys of two libraries: the instrumentation that started it and another that
wrote onto it (MLflow's Semantic Kernel autolog adds `mlflow.spanInputs` / `mlflow.spanOutputs` to
Semantic Kernel's own spans). When the reader that claimed a model span finds no messages on it
(Semantic Kernel sends its model spans' content to log records), the messages the other library's
keys hold are the call's."""

from __future__ import annotations

from tests.runs.fixture_runs import runs_of


def test_a_semantic_kernel_model_spans_messages_are_read_from_mlflows_keys_on_it() -> None:
    (run,) = runs_of("mlflow-semantic-kernel", "tool_then_answer")
    assert run.convention == "semantic_kernel"
    # The tool span holds only its call id: arguments and result are the model's request and
    # the tool message the next call was sent.
    assert [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok")
    ]
    assert "tool_arguments" not in run.missing


def test_an_agent_run_as_a_plugin_is_asked_what_its_first_model_call_was_sent() -> None:
    # The inner agent's span records an empty input (`gen_ai.input.messages` = `[]`).
    manager, weather_agent = runs_of("mlflow-semantic-kernel", "agent_as_plugin")
    assert (weather_agent.agent_name, weather_agent.input) == (
        "weather_agent",
        "Find the current weather in Paris.",
    )
    assert [(call.name, call.result) for call in manager.tool_calls] == [
        ("weather_agent", "Sunny and 21°C in Paris.")
    ]
