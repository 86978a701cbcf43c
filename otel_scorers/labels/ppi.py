"""Prediction-powered inference (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, Science 2023): a
scorer's mean over all runs estimated from the judge's scores, corrected by what people said of
the runs they labelled.

With the judge's values f_i on the N judged runs (inclusion weights w_i = 1/p_i, p_i the run's
probability of having been judged: `otel_scorers.sampling.probability`, 1 when every run is
judged) and, on the n labelled runs, the people's values y_j beside the judge's f_j (weights
v_j, the same 1/p of those runs):

    judge-only  θ_f = Σ w_i f_i / Σ w_i
    rectifier   Δ   = Σ v_j (y_j - f_j) / Σ v_j
    corrected   θ   = θ_f + Δ
    interval    θ ± z_{1-alpha/2} · sqrt( Var(w̃ f) / N + Var(ṽ (y - f)) / n )

where w̃ and ṽ are the weights scaled to mean 1 and Var is the population variance (divisor N,
n): `ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unlabeled, lam=1, w=v, w_unlabeled=w)`, the reference
implementation's classical PPI (no power tuning), and what tests/labels/test_ppi.py holds this to. The
judge-only interval is θ_f ± z · sqrt(Var(w̃ f) / N). The correction is valid when the labelled
runs are a random subset of the judged ones (people label what they are shown at random, not
the runs that look wrong): then θ is unbiased for the population mean whatever the judge's
error, and its interval covers at the stated rate. For a pass rate, f and y are 1 for pass and 0
for fail (a scorer's value, with a threshold, is its label's number).

Both intervals, and the corrected estimate itself, are kept within what they estimate: [0, 1]
for a pass rate, and for a mean value [0, 1] widened to the least and greatest value either rater
gave (a normal interval, or a correction, can otherwise leave it: a judge that passes every run
and people who fail one of two labelled give 0.5 ± 0.69).

Everything is kept as running sums (count, Σw, Σw·x, Σw²·x²), so live figures cost O(1) memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

#: The interval's coverage: 95%.
ALPHA = 0.05


@dataclass
class WeightedSums:
    """count, Σw, Σw·x and Σw²·x² of weighted observations x."""

    count: int = 0
    weight: float = 0.0
    weighted: float = 0.0
    squared: float = 0.0

    def add(self, value: float, weight: float) -> None:
        self.count += 1
        self.weight += weight
        self.weighted += weight * value
        self.squared += weight * weight * value * value

    def mean(self) -> float:
        return self.weighted / self.weight

    def variance_of_mean(self) -> float:
        """Var(w̃ x) / count, w̃ = w scaled to mean 1 (population variance): ppi_py's."""
        n = self.count
        scale = n / self.weight
        spread = scale * scale * self.squared / n - self.mean() ** 2
        return max(0.0, spread) / n


@dataclass
class PpiSums:
    """The judge's side (every judged value, weighted) or the labelled side (label - judge)."""

    sums: WeightedSums = field(default_factory=WeightedSums)
    #: The least and greatest value seen (judged, or given by either rater): the estimate's range.
    lowest: float = 0.0
    highest: float = 1.0

    def add_judged(self, value: float, probability: float) -> None:
        self.sums.add(value, _weight(probability))
        self._seen(value)

    def add_labelled(self, person: float, judge: float, probability: float) -> None:
        self.sums.add(person - judge, _weight(probability))
        self._seen(person)
        self._seen(judge)

    def _seen(self, value: float) -> None:
        if value < self.lowest:
            self.lowest = value
        elif value > self.highest:
            self.highest = value


def _weight(probability: float) -> float:
    return 1.0 / probability if 0.0 < probability < 1.0 else 1.0


def z_value(alpha: float = ALPHA) -> float:
    return NormalDist().inv_cdf(1 - alpha / 2)


def estimates(judged: PpiSums, labelled: PpiSums, alpha: float = ALPHA) -> dict[str, Any]:
    """`judge_estimate` (θ_f) with `judge_low`/`judge_high`, and `corrected_estimate` (θ) with
    `corrected_low`/`corrected_high`, `rectifier` (Δ) and `labelled` (n); None where there is
    nothing to compute from (no judged value; fewer than two labelled values for the correction)."""
    z = z_value(alpha)
    out: dict[str, Any] = {
        "judged": judged.sums.count,
        "labelled": labelled.sums.count,
        "judge_estimate": None,
        "judge_low": None,
        "judge_high": None,
        "rectifier": None,
        "corrected_estimate": None,
        "corrected_low": None,
        "corrected_high": None,
    }
    if not judged.sums.count or judged.sums.weight <= 0:
        return out
    floor, ceiling = min(judged.lowest, labelled.lowest), max(judged.highest, labelled.highest)

    def within(value: float) -> float:
        return min(ceiling, max(floor, value))

    theta_f = judged.sums.mean()
    variance_f = judged.sums.variance_of_mean()
    half = z * math.sqrt(variance_f)
    out.update(judge_estimate=theta_f, judge_low=within(theta_f - half), judge_high=within(theta_f + half))
    if labelled.sums.count < 2 or labelled.sums.weight <= 0:
        return out
    delta = labelled.sums.mean()
    theta = theta_f + delta
    half = z * math.sqrt(variance_f + labelled.sums.variance_of_mean())
    out.update(
        rectifier=delta,
        corrected_estimate=within(theta),
        corrected_low=within(theta - half),
        corrected_high=within(theta + half),
    )
    return out
