"""The hold queue both the processor (`downstream=`) and the sidecar's inline mode hold run spans in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_scorers.emission.hold_queue import HoldQueue


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def queue(clock: Clock) -> tuple[HoldQueue[str, str], list[tuple[str, Mapping[str, Any] | None]]]:
    released: list[tuple[str, Mapping[str, Any] | None]] = []
    return HoldQueue(5.0, lambda item, attributes: released.append((item, attributes)), clock), released


def test_an_item_goes_on_once_with_its_scores_or_at_its_timeout_without_them() -> None:
    clock = Clock()
    held, released = queue(clock)
    held.hold("a", "span a")
    clock.now += 1
    held.hold("b", "span b")
    held.release("a", {"score": 1.0})
    clock.now += 4.5  # a's timeout has passed, b's not yet
    held.release_expired()
    assert released == [("span a", {"score": 1.0})]
    clock.now += 1
    held.release_expired()
    held.release("b", {"score": 0.0})  # too late: it went on without its scores
    assert released == [("span a", {"score": 1.0}), ("span b", None)]
    assert len(held) == 0


def test_holding_a_key_twice_keeps_the_first_and_release_all_empties_the_queue() -> None:
    clock = Clock()
    held, released = queue(clock)
    assert held.hold("a", "first")
    assert not held.hold("a", "retried")
    held.hold("b", "other")
    held.release_all()
    assert released == [("first", None), ("other", None)]
    held.release("a")
    assert len(released) == 2
