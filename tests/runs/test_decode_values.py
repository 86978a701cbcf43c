"""Tool arguments and results written as strings: JSON, or a Python repr when the framework wrote
`str(value)`, read as data without running anything; whatever does not read stays the text it was."""

from __future__ import annotations

import pytest

from otel_scorers.conventions.formats.json_values import MAX_LITERAL_CHARS, decode_json
from otel_scorers.conventions.formats.messages import decode_content
from otel_scorers.conventions.formats.python_repr import is_default_repr


def test_json_is_read_first() -> None:
    assert decode_json('{"temp_f": 72, "sunny": true, "wind": null}') == {
        "temp_f": 72,
        "sunny": True,
        "wind": None,
    }


def test_a_python_repr_of_json_like_data_is_read_as_that_data() -> None:
    assert decode_json("{'temp_f': 72, 'sunny': True, 'wind': None, 'tags': ('a', \"b's\")}") == {
        "temp_f": 72,
        "sunny": True,
        "wind": None,
        "tags": ["a", "b's"],
    }
    assert decode_content("[{'city': 'Paris'}, 1.5, -2]") == [{"city": "Paris"}, 1.5, -2]


@pytest.mark.parametrize(
    "text",
    [
        "{'a': 1",  # truncated
        "{'a': open('/etc/passwd').read()}",  # a call is not a literal: nothing runs
        "[__import__('os').system('true')]",
        "{'a': {1, 2}}",  # a set has no JSON form
        "{'a': b'bytes'}",
        "{'a': 1j}",
        "{1: 'a'}",  # JSON keys are strings
        "[" * 50_000 + "]" * 50_000,  # nested beyond the parser's limits
        "[" * 900 + "None" + "]" * 900,
        "{'n': " + "9" * 5000 + "}",  # beyond Python's integer-string limit
        "{'a': '" + "x" * MAX_LITERAL_CHARS + "'}",  # longer than is parsed
        "{not a literal}",
        "[\x00]",
    ],
)
def test_a_malformed_or_unsafe_literal_stays_text_and_never_raises(text: str) -> None:
    assert decode_json(text) == text


def test_text_that_only_looks_like_a_literal_is_not_read() -> None:
    assert decode_json("(1, 2)") == "(1, 2)"  # only dicts and lists are tried
    assert decode_json("sunny, 72F") == "sunny, 72F"


@pytest.mark.parametrize(
    ("text", "is_default"),
    [
        (
            "<generator object _get_delegate_task_function.<locals>.delegate_task_to_member at 0x558cd0da07c0>",
            True,
        ),
        ("<agno.models.Response object at 0x7f3a2c>", True),
        ("<b>Sunny</b>", False),
        ("<generator object at the station>", False),
        ("Sunny, 21°C", False),
    ],
)
def test_an_objects_default_text_is_told_from_a_value(text: str, is_default: bool) -> None:
    assert is_default_repr(text) is is_default
