"""`quick_init` changes how a frozen dataclass is made, nothing about what it makes."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any

import pytest

from otel_scorers.conventions.base import Messages, ModelCall, RunSpanContent
from otel_scorers.model import AgentRun, Score, ToolCall
from otel_scorers.quick_init import quick_init
from otel_scorers.span_record import SpanRecord


def point_class(quick: bool) -> Any:
    @dataclass(frozen=True, slots=True)
    class Point:
        x: int
        label: str = "origin"
        tags: list[str] = field(default_factory=list)

    return quick_init(Point) if quick else Point


PLAIN, QUICK = point_class(False), point_class(True)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((1,), {}),
        ((1, "a"), {}),
        ((1, "a", ["t"]), {}),
        ((), {"x": 2, "tags": ["u"]}),
        ((3,), {"label": "b"}),
    ],
)
def test_the_same_instances_as_the_dataclass_init(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    plain, quick = PLAIN(*args, **kwargs), QUICK(*args, **kwargs)
    assert dataclasses.astuple(quick) == dataclasses.astuple(plain)
    assert repr(quick).split("(", 1)[1] == repr(plain).split("(", 1)[1]


def test_each_instance_gets_its_own_default_factory_value() -> None:
    first, second = QUICK(1), QUICK(1)
    assert first.tags == [] and first.tags is not second.tags


def test_still_frozen_equal_and_hashable() -> None:
    point = QUICK(1, "a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2
    assert point == QUICK(1, "a") and point != QUICK(2, "a")
    assert hash(QUICK(1, "a", None)) == hash(QUICK(1, "a", None))


@pytest.mark.parametrize(
    ("args", "kwargs"), [((), {}), ((1, "a", [], 4), {}), ((1,), {"nope": 1}), ((1,), {"x": 1})]
)
def test_wrong_arguments_raise_as_the_dataclass_does(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        PLAIN(*args, **kwargs)
    with pytest.raises(TypeError):
        QUICK(*args, **kwargs)


def test_the_signature_keeps_the_field_names_and_defaults() -> None:
    parameters = inspect.signature(QUICK).parameters
    assert list(parameters) == ["x", "label", "tags"]
    assert parameters["label"].default == "origin"


def test_a_dataclass_it_cannot_speed_up_is_left_as_it_is() -> None:
    @dataclass(frozen=True, slots=True)
    class Checked:
        x: int

        def __post_init__(self) -> None:
            if self.x < 0:
                raise ValueError("negative")

    original = Checked.__init__
    assert quick_init(Checked).__init__ is original
    with pytest.raises(ValueError):
        Checked(-1)

    @dataclass(frozen=True, slots=True)
    class Base:
        x: int

    @dataclass(frozen=True, slots=True)
    class Derived(Base):
        y: int = 0

    original_derived = Derived.__init__
    assert quick_init(Derived).__init__ is original_derived
    assert Derived(1, 2) == Derived(x=1, y=2)

    @dataclass(slots=True)
    class Mutable:
        x: int

    assert quick_init(Mutable).__init__ is Mutable.__init__


@pytest.mark.parametrize("cls", [AgentRun, Score, ToolCall, SpanRecord, Messages, ModelCall, RunSpanContent])
def test_the_pipeline_types_use_it(cls: type) -> None:
    assert "_set0" in cls.__init__.__code__.co_names  # type: ignore[misc]
