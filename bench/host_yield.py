"""How late a host thread wakes beside a thread computing with the engine's `HostYield`, by how
the GIL is released: `time.sleep(0)` (what the engine does), `os.sched_yield()`, or not at all.

A worker thread computes in small steps (about 10 µs of Python each), calling a `HostYield` after
each (a release after every fifth of a millisecond of work, as the engine's); the main
thread, an agent waiting for its model, sleeps 1 ms again and again and records how late each
sleep returns: past the timer's own lateness, that is the wait for the GIL. Variants alternate,
each the median of its rounds; the worker's CPU per step shows what the releases cost it.

    python bench/host_yield.py [--seconds 2] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
from collections.abc import Callable

from otel_scorers.pipeline.scoring_pipeline import HostYield

RELEASES: dict[str, Callable[[float], object]] = {
    "time.sleep(0)": time.sleep,
    "os.sched_yield()": lambda _: os.sched_yield(),
    "no release": lambda _: None,
}


def measure(release: Callable[[float], object], seconds: float) -> tuple[float, float, float]:
    """The host's median and 90th-percentile lateness (µs) and the worker's CPU per step (µs)."""
    stop = threading.Event()
    steps, cpu = [0], [0.0]

    def work() -> None:
        host_yield = HostYield(release=release)
        started = time.thread_time()
        while not stop.is_set():
            total = 0
            for number in range(200):
                total += number
            steps[0] += 1
            host_yield()
        cpu[0] = time.thread_time() - started

    worker = threading.Thread(target=work)
    late: list[float] = []
    worker.start()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        started = time.perf_counter()
        time.sleep(0.001)
        late.append(time.perf_counter() - started - 0.001)
    stop.set()
    worker.join()
    late.sort()
    return late[len(late) // 2] * 1e6, late[int(len(late) * 0.9)] * 1e6, cpu[0] / max(1, steps[0]) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=2.0, help="per variant and round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rows: dict[str, list[tuple[float, float, float]]] = {name: [] for name in RELEASES}
    loads = []
    for _ in range(args.rounds):
        for name, release in RELEASES.items():
            rows[name].append(measure(release, args.seconds))
        loads.append(os.getloadavg()[0])
    print(
        f"a host thread sleeping 1 ms beside a computing thread, {args.rounds} alternating rounds of"
        f" {args.seconds:g} s; load average {min(loads):.2f} to {max(loads):.2f} on {os.cpu_count()} cores"
    )
    print(f"{'release':<18} {'late, median':>13} {'late, p90':>10} {'worker CPU per step':>20}")
    for name, measured in rows.items():
        median, p90, cpu = (statistics.median(row[index] for row in measured) for index in range(3))
        print(f"{name:<18} {median:10.0f} µs {p90:7.0f} µs {cpu:17.2f} µs")


if __name__ == "__main__":
    main()
