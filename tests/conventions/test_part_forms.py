"""Forms of content that instrumentations write beside the GenAI conventions' own: tool-call parts
named by a tool-call record's fields, placeholders in place of content not captured, and a
framework's text for a tool that raised."""

from __future__ import annotations

import json

from otel_scorers.conventions.formats.messages import decode_messages, tool_call_parts
from otel_scorers.conventions.frameworks import returned_error
from otel_scorers.model import ToolCall
from otel_scorers.runs.withheld_values import captured_calls, captured_text


def test_a_tool_call_part_named_by_a_records_fields_is_read_as_the_conventions_part() -> None:
    text = json.dumps(
        [
            {
                "role": "assistant",
                "parts": [
                    {"type": "tool_call", "tool_name": "get_weather", "tool_call_id": "c1", "arguments": "{}"}
                ],
            }
        ]
    )
    (part,) = tool_call_parts(decode_messages(text).items)
    assert (part["name"], part["id"]) == ("get_weather", "c1")


def test_placeholders_in_each_part_are_read_as_not_captured() -> None:
    assert captured_text("[redacted]") is None
    assert captured_text("Sunny") == "Sunny"
    call = ToolCall(name="get_weather", call_id="c1", arguments="[redacted]", result="[redacted]")
    (read,) = captured_calls([call])
    assert (read.arguments, read.result) == (None, None)


def test_the_openai_agents_sdks_text_for_a_tool_that_raised_is_a_failure() -> None:
    text = "An error occurred while running the tool. Please try again."
    assert returned_error(None, text) == text
    assert returned_error(None, text + " Error: service down") == "service down"
    assert returned_error(None, "Sunny, 21°C") is None
