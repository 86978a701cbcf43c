"""The figures of agreement between a judge and people: Cohen's κ with the base rates it reads,
and Spearman's rank correlation of values."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any


def kappa_figures(confusion: Mapping[tuple[str, str], int]) -> dict[str, Any]:
    """Observed agreement p_o, Cohen's κ = (p_o - p_e) / (1 - p_e) with p_e = Σ_k judge_k · person_k
    (the agreement two raters with these base rates would reach by chance), and the base rates.
    κ is None when p_e is 1 (both always said the same one label: chance explains everything)."""
    total = sum(confusion.values())
    if not total:
        return {"agreement": None, "kappa": None, "judge_rates": {}, "human_rates": {}}
    judge: dict[str, int] = {}
    person: dict[str, int] = {}
    agreed = 0
    for (said, truth), count in confusion.items():
        judge[said] = judge.get(said, 0) + count
        person[truth] = person.get(truth, 0) + count
        if said == truth:
            agreed += count
    observed = agreed / total
    chance = sum(judge.get(label, 0) * person.get(label, 0) for label in set(judge) | set(person)) / total**2
    kappa = None if chance >= 1.0 else (observed - chance) / (1.0 - chance)
    return {
        "agreement": observed,
        "kappa": kappa,
        "judge_rates": {label: count / total for label, count in sorted(judge.items())},
        "human_rates": {label: count / total for label, count in sorted(person.items())},
    }


def _ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, ties sharing their mean rank (as Spearman's coefficient needs)."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def spearman(pairs: Sequence[tuple[float, float]]) -> float | None:
    """Spearman's rho: Pearson's correlation of the ranks (ties at their mean rank); None when
    either side does not vary."""
    first = _ranks([a for a, _ in pairs])
    second = _ranks([b for _, b in pairs])
    n = len(pairs)
    mean = (n + 1) / 2
    covariance = sum((a - mean) * (b - mean) for a, b in zip(first, second, strict=True))
    spread_a = math.sqrt(sum((a - mean) ** 2 for a in first))
    spread_b = math.sqrt(sum((b - mean) ** 2 for b in second))
    if spread_a == 0 or spread_b == 0:
        return None
    return covariance / (spread_a * spread_b)
