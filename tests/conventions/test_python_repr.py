"""Tool values an instrumentation wrote as Python's text of an object are read without evaluating
anything, within bounds, and kept as they are when the reading is not certain."""

from __future__ import annotations

from otel_scorers.conventions.formats.json_values import MAX_LITERAL_CHARS
from otel_scorers.conventions.formats.python_repr import decoded_value, object_fields

TOOL_MESSAGE = "content='Sunny, 21°C' name='get_weather' tool_call_id='call_001'"


def test_a_message_objects_text_is_read_as_its_fields() -> None:
    assert object_fields(TOOL_MESSAGE) == {
        "content": "Sunny, 21°C",
        "name": "get_weather",
        "tool_call_id": "call_001",
    }


def test_a_tool_result_message_is_its_content_and_a_dict_repr_is_the_dict() -> None:
    assert decoded_value(TOOL_MESSAGE) == "Sunny, 21°C"
    assert decoded_value("{'temp_c': 21, 'sunny': True, 'wind': None}") == {
        "temp_c": 21,
        "sunny": True,
        "wind": None,
    }


def test_values_with_spaces_quotes_and_brackets_stay_inside_their_field() -> None:
    text = "content='a b=c \\'d\\'' tool_call_id='x' response_metadata={'k': [1, 'y z=1']}"
    assert object_fields(text) == {
        "content": "a b=c 'd'",
        "tool_call_id": "x",
        "response_metadata": {"k": [1, "y z=1"]},
    }


def test_code_in_a_repr_is_never_run_and_the_text_is_kept() -> None:
    text = "content=__import__('os').system('touch /tmp/pwned') tool_call_id='x'"
    assert object_fields(text) is None
    assert decoded_value(text) == text


def test_text_that_is_not_certainly_a_repr_is_kept_as_it_is() -> None:
    for text in (
        "Sunny, 21°C",
        "content=ToolCall(name='x') tool_call_id='x'",  # a nested object: not a literal
        "content='unclosed tool_call_id='x'",
        "content='x' tool_call_id='y' " + "z" * MAX_LITERAL_CHARS,  # past the bound: not read
    ):
        assert decoded_value(text) == text


def test_a_structure_without_a_tool_call_id_is_not_a_tool_message() -> None:
    assert decoded_value("content='hello' name='user'") == "content='hello' name='user'"
    assert decoded_value({"content": "x", "type": "human"}) == {"content": "x", "type": "human"}
