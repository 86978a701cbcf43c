"""A tool span may be named by what implements the tool rather than the tool the model asked for,
with no call id (MLflow's AG2 autolog names the span after the Python function registered as the
tool): the one request given exactly its arguments is the call it answers, under the requested
name, not a second call. Named after a method of the object that implements it, or by a tracer's
placeholder for a name it did not find (`unknown`), with no request to name it, the span does not
say which tool ran."""

from __future__ import annotations

import json

from otel_scorers import bind, checks
from otel_scorers.model import Score
from otel_scorers.pipeline.scorer_call import evaluate
from tests.runs.fixture_runs import TRACES, runs_of


def test_a_tool_span_named_after_its_function_answers_the_request_given_its_arguments() -> None:
    # `failing_get_weather`, registered as `get_weather`, raised: the model was sent the error.
    (run,) = runs_of("mlflow-ag2", "failing_tool")
    assert [(call.name, call.arguments, call.state) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "error")
    ]


def test_a_tool_span_named_after_its_implementing_method_with_no_request_lists_the_calls_as_missing() -> None:
    # MLflow's smolagents autolog names the tool spans `SimpleTool.__call__` and `TimeTool.__call__`
    # (the class every function tool is made with, and a tool's own class) and records no model
    # call: `get_weather` and `get_time` are named in no span, so neither is guessed.
    (run,) = runs_of("mlflow-smolagents", "two_tools")
    assert run.tool_calls == ()
    assert {"tool_calls", "tool_errors"} <= run.missing
    score = evaluate(bind(checks.called_tool("get_weather")), run)
    assert isinstance(score, Score) and score.value is None and score.skipped is not None


def test_a_tool_span_naming_its_tool_by_a_placeholder_lists_the_calls_as_missing() -> None:
    # AgentOps over smolagents writes `tool.name = unknown` and `tool.parameters = {}` on each
    # `tool.execute` span, the loop-ending `final_answer` call among them, and its model spans
    # record no tool call: which tools ran is not in the trace, so no call is guessed.
    (run,) = runs_of("agentops-smolagents", "two_tools")
    (expected,) = json.loads((TRACES / "agentops-smolagents" / "two_tools.truth.json").read_text())["runs"]
    assert (run.agent_name, run.output) == (expected["agent_name"], expected["output"])
    assert run.tool_calls == ()
    assert {"tool_calls", "tool_errors"} <= run.missing
    score = evaluate(bind(checks.used_no_tools()), run)
    assert isinstance(score, Score) and score.value is None and score.skipped is not None
