"""A description's path walks a value written as the Python repr of data holding objects.

TruLens records a traced method's arguments and return value as Python reprs: LangGraph's tool
node returns `{'messages': [ToolMessage(..., status='error')]}`, and `create_react_agent`'s node
is called with `{'__type': ..., 'tool_call': {...}, 'state': {'messages': [HumanMessage(...)]}}`.
Read on the spans of the real traces (tests/fixtures/traces/trulens-langgraph/), by a description
written here, not the shipped one.
"""

from __future__ import annotations

import json
from pathlib import Path

from otel_scorers.conventions.described import described
from otel_scorers.runs.otlp_files import read_spans
from otel_scorers.span_record import SpanRecord

TRACES = Path(__file__).parent.parent / "fixtures" / "traces" / "trulens-langgraph"
CALL_INPUT = "ai.observability.call.kwargs.input"
CALL_RETURN = "ai.observability.call.return"


def tool_span(scenario: str) -> SpanRecord:
    (span,) = (
        span
        for span in read_spans(TRACES / f"{scenario}.json", [])
        if span.attributes.get("ai.observability.span_type") == "tool"
    )
    return span


def truth_call(scenario: str) -> dict[str, object]:
    truth = json.loads((TRACES / f"{scenario}.truth.json").read_text())
    (call,) = truth["runs"][0]["tool_calls"]
    return dict(call)


READER = described(
    [
        {
            "name": "repr_paths",
            "scope": "trulens",
            "run": {"when": {"attributes": {"ai.observability.span_type": "record_root"}}},
            "tool": {
                "when": {"attributes": {"ai.observability.span_type": "tool"}},
                "name": {"attribute": CALL_INPUT, "path": "tool_call.name"},
                "call_id": {"attribute": CALL_INPUT, "path": "tool_call.id"},
                "arguments": {"attribute": CALL_INPUT, "path": "tool_call.args"},
                "error": {"attribute": CALL_RETURN, "path": "messages[0].status"},
            },
        }
    ]
)[0]


def test_a_path_walks_the_repr_of_data_holding_objects() -> None:
    span = tool_span("react_agent")
    assert str(span.attributes[CALL_INPUT]).startswith("{'__type'")  # a repr, not JSON
    call = READER.tool_call(span)
    expected = truth_call("react_agent")
    assert (call.name, call.arguments, call.state) == (expected["name"], expected["arguments"], "ok")
    assert call.call_id and call.call_id.startswith("call_")


def test_a_path_reads_a_field_of_an_object_in_a_repr() -> None:
    span = tool_span("failing_tool_handled")
    assert span.status != "error"  # the graph reported the failure to the model: the span is OK
    call = READER.tool_call(span)
    assert truth_call("failing_tool_handled")["error"] is True
    assert call.state == "error"
