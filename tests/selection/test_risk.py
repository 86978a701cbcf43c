"""The risk tracker: what it remembers of the runs it has seen is bounded in bytes."""

from __future__ import annotations

import gc
import tracemalloc

from otel_scorers.model import AgentRun
from otel_scorers.selection.risk import VERSION_WARM_UP_S, RiskSignals


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _run(n: int, name: str) -> AgentRun:
    return AgentRun(1, n + 1, name, "hi", "yo" * (n % 7 + 1), models=(name,), start_ns=0, end_ns=10**6)


def test_runs_naming_new_long_models_and_agents_hold_a_bounded_number_of_bytes() -> None:
    signals = RiskSignals(clock=Clock())
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(5000):  # each run a new 100 kB model and agent name
            signals.signals(_run(n, f"{n:05d}" + "m" * 100_000))
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 4_000_000, held  # 391 MB when the names were kept whole


def test_a_long_name_is_still_new_once_and_then_seen() -> None:
    clock = Clock()
    signals = RiskSignals(clock=clock)
    signals.signals(_run(0, "warm-up"))
    clock.now = VERSION_WARM_UP_S + 1
    long_name = "v" * 10_000
    assert "new_version" in signals.signals(_run(1, long_name))
    clock.now += 1
    assert "new_version" not in signals.signals(_run(2, long_name))
    assert "new_version" in signals.signals(_run(3, long_name[:-1] + "w"))  # another name, though alike
