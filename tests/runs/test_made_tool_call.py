"""A tool call that run building makes through its slots' setters (`made_tool_call`) is the
frozen `ToolCall` its constructor makes: equal, hashed alike, refusing changes, copied, replaced
and pickled as one."""

from __future__ import annotations

import copy
import pickle
from dataclasses import FrozenInstanceError, replace

import pytest

from otel_scorers.model import ToolCall, ToolState, made_tool_call

STATE: ToolState = "ok"
FIELDS = ("get_weather", "call_1", "Paris", "Sunny, 21°C", STATE, None, 10, 20)


def test_a_made_tool_call_equals_the_constructors_and_hashes_alike() -> None:
    made = made_tool_call(*FIELDS)
    built = ToolCall(*FIELDS)
    assert type(made) is ToolCall
    assert made == built
    assert hash(made) == hash(built)
    assert repr(made) == repr(built)


def test_a_made_tool_call_refuses_changes_as_a_frozen_one_does() -> None:
    made = made_tool_call(*FIELDS)
    with pytest.raises(FrozenInstanceError):
        made.result = "Rainy"  # type: ignore[misc]
    assert made.result == "Sunny, 21°C"


def test_a_made_tool_call_copies_replaces_and_pickles_as_a_tool_call() -> None:
    made = made_tool_call(*FIELDS)
    assert copy.copy(made) == made
    assert pickle.loads(pickle.dumps(made)) == ToolCall(*FIELDS)
    assert replace(made, state="error", error="boom") == ToolCall(
        "get_weather", "call_1", "Paris", "Sunny, 21°C", "error", "boom", 10, 20
    )
