"""`SingleFlight`: an identical question is computed once, whoever asks it and when."""

from __future__ import annotations

import asyncio

import pytest

from otel_scorers.scorers.judge.cache import BoundedCache
from otel_scorers.scorers.judge.single_flight import SingleFlight


def test_identical_questions_at_the_same_time_are_computed_once() -> None:
    flights = SingleFlight(BoundedCache(8))
    computed = 0

    async def compute() -> str:
        nonlocal computed
        computed += 1
        await asyncio.sleep(0.01)
        return "yes"

    async def five() -> list[tuple[str, bool]]:
        return await asyncio.gather(*(flights.once("q", compute) for _ in range(5)))

    results = asyncio.run(five())
    assert computed == 1
    assert sorted(was_shared for _, was_shared in results) == [False, True, True, True, True]
    assert {value for value, _ in results} == {"yes"}
    assert asyncio.run(flights.once("q", compute)) == ("yes", True) and computed == 1  # from the cache


def test_when_the_first_fails_the_others_compute_on_their_own() -> None:
    flights = SingleFlight(BoundedCache(0))  # nothing cached: each success is its own
    attempts = 0

    async def compute() -> str:
        nonlocal attempts
        attempts += 1
        await asyncio.sleep(0.01)
        if attempts == 1:
            raise RuntimeError("the judge failed")
        return "yes"

    async def three() -> list[object]:
        return await asyncio.gather(*(flights.once("q", compute) for _ in range(3)), return_exceptions=True)

    results = asyncio.run(three())
    assert isinstance(results[0], RuntimeError)
    assert results[1:] == [("yes", False), ("yes", False)]  # each waiting caller asked on its own
    assert attempts == 3


def test_a_failure_is_not_cached() -> None:
    flights = SingleFlight(BoundedCache(8))

    async def fails() -> str:
        raise ValueError("no")

    with pytest.raises(ValueError):
        asyncio.run(flights.once("q", fails))
    assert len(flights.cache) == 0
