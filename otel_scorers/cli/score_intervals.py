"""The intervals `score` states and compares with: Wilson's score interval for a pass rate,
Newcombe's hybrid score interval for the difference of two (Newcombe 1998, method 10), and the
normal interval of a mean and of a difference of two means (Welch's), each at a two-sided
confidence. A pass rate's interval is within [0, 1] by construction; a mean's is held to the
range its values can have."""

from __future__ import annotations

import math
from statistics import NormalDist


def z_of(confidence: float) -> float:
    """The normal quantile of a two-sided interval at `confidence` (1.96 at 0.95)."""
    return NormalDist().inv_cdf((1 + confidence) / 2)


def wilson(successes: int, trials: int, z: float) -> tuple[float, float]:
    """Wilson's score interval for a proportion."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe(
    successes1: int, trials1: int, successes2: int, trials2: int, confidence: float
) -> tuple[float, float]:
    """Newcombe's hybrid score interval for p1 - p2 (method 10)."""
    z = z_of(confidence)
    p1, p2 = successes1 / trials1, successes2 / trials2
    low1, high1 = wilson(successes1, trials1, z)
    low2, high2 = wilson(successes2, trials2, z)
    difference = p1 - p2
    return (
        difference - math.sqrt((p1 - low1) ** 2 + (high2 - p2) ** 2),
        difference + math.sqrt((high1 - p1) ** 2 + (p2 - low2) ** 2),
    )


def mean_interval(
    mean: float, variance: float, count: int, confidence: float, floor: float, ceiling: float
) -> tuple[float, float]:
    """The normal interval of a mean of `count` values, held to [floor, ceiling]."""
    half = z_of(confidence) * math.sqrt(variance / count)
    return max(floor, mean - half), min(ceiling, mean + half)


def welch(
    current: tuple[float, float, int], baseline: tuple[float, float, int], confidence: float
) -> tuple[float, float]:
    """The normal interval of the difference of two means, each (mean, variance, count) with its
    own variance."""
    spread = math.sqrt(current[1] / max(current[2], 1) + baseline[1] / max(baseline[2], 1))
    difference = current[0] - baseline[0]
    z = z_of(confidence)
    return difference - z * spread, difference + z * spread
