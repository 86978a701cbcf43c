"""Mastra's round2, the one rounding rule of every Mastra-derived score."""

from __future__ import annotations

import math
import sys


def round2(value: float) -> float:
    """`Math.round((value + Number.EPSILON) * 100) / 100`: two decimals, halves upwards after a
    machine epsilon, so 0.575 gives 0.58 where Python's `round` gives 0.57 (0.575 is stored as
    0.57499999...). Math.round is floor(x + 0.5) for every x, computed here without the addition's
    own rounding error."""
    scaled = (value + sys.float_info.epsilon) * 100
    whole = math.floor(scaled)
    return (whole + 1 if scaled - whole >= 0.5 else whole) / 100
