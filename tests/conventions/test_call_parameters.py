"""A tool call recorded as the bound arguments of the framework's own tool-calling method
(`Framework.call_parameters`, conventions/call_parameters.py) holds the tool's arguments only,
and is known as that framework's by them under a scope that names no framework."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from otel_scorers.conventions.frameworks import FRAMEWORKS, framework_of_call
from otel_scorers.model import ToolCall
from otel_scorers.runs.otlp_files import InputProblem, read_spans

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "traceai-smolagents"


def test_a_call_recorded_with_the_tool_methods_own_parameters_holds_the_tools_arguments() -> None:
    truth = json.loads((CORPUS / "two_tools.truth.json").read_text())
    problems: list[InputProblem] = []
    spans = list(read_spans(CORPUS / "two_tools.json", problems))
    assert not problems
    expected = truth["runs"][0]["tool_calls"]
    for wanted in expected:
        span = next(span for span in spans if span.attributes.get("gen_ai.tool.name") == wanted["name"])
        recorded = json.loads(str(span.attributes["input.value"]))
        assert recorded != wanted["arguments"]  # the method's own parameters are recorded too
        call = ToolCall(name=wanted["name"], arguments=recorded)
        framework = framework_of_call(replace(span, scope="acme.tracer"), call)
        assert framework is FRAMEWORKS["smolagents"]
        assert framework.as_called(call).arguments == wanted["arguments"]


def test_a_call_holding_no_such_parameter_keeps_its_arguments() -> None:
    call = ToolCall(name="get_weather", arguments={"args": {}, "city": "Paris"})
    assert FRAMEWORKS["smolagents"].as_called(call) is call
