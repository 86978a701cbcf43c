"""A tool span may be named by what implements the tool rather than the tool the model asked for,
with no call id (MLflow's AG2 autolog names the span after the Python function registered as the
tool): the one request given exactly its arguments is the call it answers, under the requested
name, not a second call."""

from __future__ import annotations

from tests.runs.fixture_runs import runs_of


def test_a_tool_span_named_after_its_function_answers_the_request_given_its_arguments() -> None:
    # `failing_get_weather`, registered as `get_weather`, raised: the model was sent the error.
    (run,) = runs_of("mlflow-ag2", "failing_tool")
    assert [(call.name, call.arguments, call.state) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "error")
    ]
