"""What AG2 records the same whichever instrumentation traces it (a tool run through
`ConversableAgent.execute_function`: the model's request in, `[success, {content}]` out) is read
by the shared rules, on traces captured from real packages (tests/fixtures/traces/ag2-openinference)
read by a reader that knows nothing of AG2: a `conventions:` description."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from otel_scorers import conventions
from tests.runs.fixture_runs import runs_of

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"

#: OpenInference's AG2 spans described as a user who knows nothing of AG2 would: the chat is the
#: run, a TOOL span a tool call with its input and output as they are.
_UNKNOWING = {
    "name": "traced-functions",
    "scope": "openinference.instrumentation.ag2",
    "run": {
        "when": {"attributes": {"openinference.span.kind": "AGENT", "ag2.recipient.name": "*"}},
        "agent_name": "ag2.recipient.name",
        "input": {"attribute": "input.value", "path": "message"},
        "output": "output.value",
    },
    "tool": {
        "when": {"attributes": {"openinference.span.kind": "TOOL"}},
        "name": "tool.name",
        "call_id": "tool_call.id",
        "arguments": "input.value",
        "result": "output.value",
    },
}


@pytest.fixture
def described_unknowingly() -> Iterator[None]:
    conventions.use_descriptions([_UNKNOWING])
    yield
    conventions.use_descriptions(())


@pytest.mark.usefixtures("described_unknowingly")
def test_ag2_s_execute_function_request_and_result_are_the_tool_s_arguments_and_result() -> None:
    (run,) = runs_of("ag2-openinference", "two_tools")
    assert run.convention == "traced-functions"
    assert [(call.name, call.arguments, call.result, call.state) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok"),
        ("get_time", {"city": "Paris"}, "14:05", "ok"),
    ]


@pytest.mark.usefixtures("described_unknowingly")
def test_a_failed_ag2_tool_call_keeps_the_arguments_the_model_gave() -> None:
    (run,) = runs_of("ag2-openinference", "failing_tool")
    (call,) = run.tool_calls
    assert (call.name, call.arguments, call.state) == ("get_weather", {"city": "Paris"}, "error")
