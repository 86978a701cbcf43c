"""A CI run compared with the last good one: per-scorer summaries written as a file
(`score --summary-out`) and today's summary held against one (`score --baseline`).

A scorer is compared on its pass rate when both runs labelled its results pass/fail (a label
`pass` is the good verdict whatever the scorer's direction), else on its mean value (lower is
better for the scorers that say higher is worse: hallucination, bias, toxicity). It is a
regression, which fails the build, only when both hold:

- it is worse by more than `margin` (the point estimate of today minus the baseline), and
- the difference is unlikely to be noise: the two-sided interval at `confidence` for the
  difference lies wholly on the worse side of 0. For pass rates, Newcombe's hybrid score
  interval (Newcombe 1998, method 10: from each side's Wilson interval), sound for small counts
  and rates near 0 or 1; for means, the normal interval of Welch's difference of means
  (d ± z·sqrt(s₁²/n₁ + s₂²/n₂)), which needs two scored runs a side. At the default 0.95, a
  decline is called real when a one-sided test would reject "no worse" at 2.5 %.

A scorer whose evaluator version differs from the baseline's (another prompt, model or
argument) is reported and not compared: its numbers measure something else. One missing from
either side is reported too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any, Literal

from otel_scorers.cli.score_summary import ScorerTally, ScoreSummary
from otel_scorers.selection.binding import Binding

FORMAT = "otel-scorers.summary/1"
DEFAULT_MARGIN = 0.02
DEFAULT_CONFIDENCE = 0.95
Verdict = Literal["regression", "no_regression", "not_compared"]


@dataclass(frozen=True, slots=True)
class ScorerSummary:
    """What a summary file says of one scorer."""

    scored: int
    valued: int
    mean: float | None
    variance: float | None
    passed: int
    failed: int
    evaluator_version: str | None
    higher_is_worse: bool = False
    #: The least and the greatest value scored, when known (summaries written before lack them).
    lowest: float | None = None
    highest: float | None = None

    @property
    def pass_rate(self) -> float | None:
        judged = self.passed + self.failed
        return self.passed / judged if judged else None

    def pass_rate_interval(self, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float] | None:
        """Wilson's score interval of the pass rate at `confidence`: always within [0, 1]."""
        judged = self.passed + self.failed
        if not judged:
            return None
        return wilson(self.passed, judged, NormalDist().inv_cdf((1 + confidence) / 2))

    def mean_interval(self, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float] | None:
        """The normal interval of the mean at `confidence` (two scored values at least), kept
        within what a mean of these values can be: [0, 1], widened to the least and greatest
        value scored when a scorer's values leave it."""
        if self.mean is None or self.variance is None or self.valued < 2:
            return None
        half = NormalDist().inv_cdf((1 + confidence) / 2) * math.sqrt(self.variance / self.valued)
        floor = min(0.0, self.lowest if self.lowest is not None else self.mean)
        ceiling = max(1.0, self.highest if self.highest is not None else self.mean)
        return max(floor, self.mean - half), min(ceiling, self.mean + half)

    def to_json(self, confidence: float = DEFAULT_CONFIDENCE) -> dict[str, Any]:
        return {
            "scored": self.scored,
            "valued": self.valued,
            "mean": self.mean,
            "variance": self.variance,
            "pass": self.passed,
            "fail": self.failed,
            "pass_rate": self.pass_rate,
            "evaluator_version": self.evaluator_version,
            "higher_is_worse": self.higher_is_worse,
            "lowest": self.lowest,
            "highest": self.highest,
            "confidence": confidence,
            "pass_rate_interval": self.pass_rate_interval(confidence),
            "mean_interval": self.mean_interval(confidence),
        }


def higher_is_worse(scorer: Any) -> bool:
    """The scorer says a higher value is worse (a judge rule's `higher_is_worse`: hallucination,
    bias, toxicity), so its mean falls when it improves."""
    return bool(getattr(getattr(scorer, "rule", None), "higher_is_worse", False))


def scorer_summary(tally: ScorerTally, version: str | None, higher_is_worse: bool = False) -> ScorerSummary:
    variance = None
    if tally.valued > 1 and tally.mean is not None:
        variance = max(0.0, (tally.squares - tally.valued * tally.mean**2) / (tally.valued - 1))
    return ScorerSummary(
        tally.scored,
        tally.valued,
        tally.mean,
        variance,
        tally.labels["pass"],
        tally.labels["fail"],
        version,
        higher_is_worse,
        tally.lowest,
        tally.highest,
    )


def summaries(summary: ScoreSummary, bindings: Sequence[Binding]) -> dict[str, ScorerSummary]:
    """Each scorer's summary, with its binding's evaluator version and direction."""
    by_name = {binding.name: binding for binding in bindings}
    found = {}
    for name, tally in summary.tallies.items():
        binding = by_name.get(name)
        version = binding.evaluator_version if binding is not None else None
        found[name] = scorer_summary(tally, version, binding is not None and higher_is_worse(binding.scorer))
    return found


def summary_document(
    summary: ScoreSummary, scorers: Mapping[str, ScorerSummary], confidence: float = DEFAULT_CONFIDENCE
) -> dict[str, Any]:
    """The summary file's content: per scorer its counts, mean, variance, pass rate, their
    intervals at `confidence`, and evaluator version."""
    return {
        "format": FORMAT,
        "runs": summary.runs,
        "scorers": {name: entry.to_json(confidence) for name, entry in scorers.items()},
    }


def write_summary(path: Path, document: Mapping[str, Any]) -> None:
    path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def read_summary(path: Path) -> dict[str, ScorerSummary]:
    """A summary file's scorers; `ValueError` naming the file and what is wrong with it."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read the baseline {path}: {exc.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the baseline {path} is not JSON: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"the baseline {path} is not a summary written by score --summary-out ({FORMAT})")
    scorers = document.get("scorers")
    if not isinstance(scorers, dict):
        raise ValueError(f"the baseline {path} has no scorers")
    found = {}
    for name, entry in scorers.items():
        try:
            found[name] = ScorerSummary(
                int(entry["scored"]),
                int(entry["valued"]),
                None if entry["mean"] is None else float(entry["mean"]),
                None if entry["variance"] is None else float(entry["variance"]),
                int(entry["pass"]),
                int(entry["fail"]),
                entry["evaluator_version"],
                bool(entry.get("higher_is_worse", False)),
                _number(entry.get("lowest")),
                _number(entry.get("highest")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"the baseline {path}: scorer {name!r} cannot be read ({exc!r})") from None
    return found


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True, slots=True)
class Comparison:
    """One scorer today against the baseline."""

    scorer: str
    verdict: Verdict
    note: str
    statistic: str | None = None
    baseline: float | None = None
    current: float | None = None
    low: float | None = None
    high: float | None = None

    @property
    def difference(self) -> float | None:
        if self.baseline is None or self.current is None:
            return None
        return self.current - self.baseline

    @property
    def failed(self) -> bool:
        return self.verdict == "regression"

    def text(self) -> str:
        if self.statistic is None or self.difference is None:
            return self.note
        return (
            f"{self.statistic} {self.baseline:.3f} -> {self.current:.3f} ({self.difference:+.3f}, "
            f"interval {self.low:+.3f}..{self.high:+.3f}): {self.note}"
        )


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
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    p1, p2 = successes1 / trials1, successes2 / trials2
    low1, high1 = wilson(successes1, trials1, z)
    low2, high2 = wilson(successes2, trials2, z)
    difference = p1 - p2
    return (
        difference - math.sqrt((p1 - low1) ** 2 + (high2 - p2) ** 2),
        difference + math.sqrt((high1 - p1) ** 2 + (p2 - low2) ** 2),
    )


def welch(current: ScorerSummary, baseline: ScorerSummary, confidence: float) -> tuple[float, float]:
    """The normal interval of the difference of two means, each with its own variance."""
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    assert current.mean is not None and baseline.mean is not None
    spread = math.sqrt(
        (current.variance or 0.0) / max(current.valued, 1)
        + (baseline.variance or 0.0) / max(baseline.valued, 1)
    )
    difference = current.mean - baseline.mean
    return difference - z * spread, difference + z * spread


def compare(
    current: Mapping[str, ScorerSummary],
    baseline: Mapping[str, ScorerSummary],
    margin: float = DEFAULT_MARGIN,
    confidence: float = DEFAULT_CONFIDENCE,
) -> list[Comparison]:
    """Each scorer of `current` against `baseline`, then the baseline's scorers missing today."""
    found = [_compare(name, now, baseline.get(name), margin, confidence) for name, now in current.items()]
    found.extend(
        Comparison(name, "not_compared", "in the baseline, not in this run")
        for name in baseline
        if name not in current
    )
    return found


def _compare(
    name: str, now: ScorerSummary, before: ScorerSummary | None, margin: float, confidence: float
) -> Comparison:
    if before is None:
        return Comparison(name, "not_compared", "not in the baseline")
    if now.evaluator_version != before.evaluator_version:
        return Comparison(
            name,
            "not_compared",
            f"evaluator version changed ({before.evaluator_version} -> {now.evaluator_version}): not compared",
        )
    if now.pass_rate is not None and before.pass_rate is not None:
        statistic, worse_when_lower = "pass_rate", True
        low, high = newcombe(
            now.passed, now.passed + now.failed, before.passed, before.passed + before.failed, confidence
        )
        baseline_value, current_value = before.pass_rate, now.pass_rate
    elif now.mean is not None and before.mean is not None:
        if now.valued < 2 or before.valued < 2:
            return Comparison(
                name, "not_compared", "too few scored runs to compare means (fewer than 2 on a side)"
            )
        statistic, worse_when_lower = "mean", not now.higher_is_worse
        low, high = welch(now, before, confidence)
        baseline_value, current_value = before.mean, now.mean
    else:
        return Comparison(name, "not_compared", "nothing to compare (no scored runs on one side)")
    drop = (baseline_value - current_value) if worse_when_lower else (current_value - baseline_value)
    beyond_noise = high < 0 if worse_when_lower else low > 0
    if drop > margin and beyond_noise:
        note = f"worse by more than {margin:g}, beyond noise at {confidence:g}: FAIL"
        verdict: Verdict = "regression"
    elif drop > margin:
        note = f"worse by more than {margin:g}, within noise at {confidence:g}: ok"
        verdict = "no_regression"
    else:
        note = "no worse than the margin: ok"
        verdict = "no_regression"
    return Comparison(name, verdict, note, statistic, baseline_value, current_value, low, high)


def comparison_table(comparisons: list[Comparison]) -> str:
    """One row per comparison: scorer, statistic, baseline, now, difference, interval, verdict."""
    header = ("scorer", "compared", "baseline", "now", "difference", "interval", "verdict")
    rows = [header]
    for item in comparisons:
        if item.statistic is None or item.difference is None:
            rows.append((item.scorer, "-", "-", "-", "-", "-", item.note))
            continue
        rows.append(
            (
                item.scorer,
                item.statistic,
                f"{item.baseline:.3f}",
                f"{item.current:.3f}",
                f"{item.difference:+.3f}",
                f"{item.low:+.3f}..{item.high:+.3f}",
                item.note,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    )
