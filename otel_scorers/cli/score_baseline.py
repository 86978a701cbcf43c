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
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from otel_scorers.cli.score_intervals import mean_interval, newcombe, welch, wilson, z_of
from otel_scorers.cli.score_summary import ScorerTally, ScoreSummary
from otel_scorers.human_text import cut, printable
from otel_scorers.selection.binding import Binding

FORMAT = "otel-scorers.summary/1"
DEFAULT_MARGIN = 0.02
DEFAULT_CONFIDENCE = 0.95
#: `incomparable`: the numbers of one side give no finite interval (today's values summed past a
#: float's range); it fails the gate, as a regression does, rather than pass unseen.
Verdict = Literal["regression", "no_regression", "not_compared", "incomparable"]


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
        return wilson(self.passed, judged, z_of(confidence))

    def mean_interval(self, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float] | None:
        """The normal interval of the mean at `confidence` (two scored values at least), kept
        within what a mean of these values can be: [0, 1], widened to the least and greatest
        value scored when a scorer's values leave it."""
        if self.mean is None or self.variance is None or self.valued < 2:
            return None
        floor = min(0.0, self.lowest if self.lowest is not None else self.mean)
        ceiling = max(1.0, self.highest if self.highest is not None else self.mean)
        return mean_interval(self.mean, self.variance, self.valued, confidence, floor, ceiling)

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


#: A summary file is a few hundred bytes a scorer: a larger one is refused, not read.
MAX_BASELINE_BYTES = 16 * 1024 * 1024
#: Counts a summary can hold (runs scored by one CI job): beyond, the file was not written by
#: `--summary-out`.
MAX_COUNT = 10**12
#: The largest mean magnitude and variance accepted: far beyond any score, small enough that the
#: interval's arithmetic stays finite.
MAX_MEAN = 1e15
MAX_VARIANCE = 1e30


def read_summary(path: Path) -> dict[str, ScorerSummary]:
    """A summary file's scorers; `ValueError` naming the file, and the field, that is wrong: a
    baseline that cannot be compared stops the gate rather than pass it."""
    try:
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size > MAX_BASELINE_BYTES:
                raise ValueError(
                    f"the baseline {path} is {size:,} bytes, more than the {MAX_BASELINE_BYTES:,} "
                    "a summary can take"
                )
            data = file.read(MAX_BASELINE_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read the baseline {path}: {exc.strerror}") from None
    if len(data) > MAX_BASELINE_BYTES:  # a file that grew, or a device that reports no size
        raise ValueError(
            f"the baseline {path} is more than the {MAX_BASELINE_BYTES:,} bytes a summary can take"
        )
    try:
        # NaN and infinities are read, to be refused by name below; nesting past the
        # interpreter's recursion is an error, not a crash.
        document = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the baseline {path} is not JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"the baseline {path} nests too deep to be a summary") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"the baseline {path} is not a summary written by score --summary-out ({FORMAT})")
    scorers = document.get("scorers")
    if not isinstance(scorers, dict):
        raise ValueError(f"the baseline {path} has no scorers")
    found = {}
    for name, entry in scorers.items():
        try:
            found[name] = _scorer_entry(entry)
        except ValueError as exc:
            raise ValueError(f"the baseline {path}: scorers.{_shown(name)}{exc}") from None
    return found


def _shown(name: str) -> str:
    return printable(cut(name, 64))


def _scorer_entry(entry: Any) -> ScorerSummary:
    """One scorer's entry, each field checked: counts whole, non-negative and consistent, mean and
    variance finite and in range; `ValueError` starting with the bad field (`.mean is …`)."""
    if not isinstance(entry, dict):
        raise ValueError(f" is {type(entry).__name__}, not an object")
    scored, valued, passed, failed = (_count(entry, key) for key in ("scored", "valued", "pass", "fail"))
    if valued > scored:
        raise ValueError(f".valued is {valued}, more than .scored ({scored})")
    if passed + failed > scored:
        raise ValueError(f".pass and .fail are {passed} and {failed}, more than .scored ({scored})")
    mean = _number(entry, "mean", MAX_MEAN, allowed=valued > 0)
    variance = _number(entry, "variance", MAX_VARIANCE, allowed=valued > 1)
    if variance is not None and variance < 0:
        raise ValueError(f".variance is {variance!r}, below 0")
    if valued > 0 and mean is None:
        raise ValueError(f".mean is null, with {valued} valued runs")
    version = entry.get("evaluator_version")
    if version is not None and not isinstance(version, str):
        raise ValueError(f".evaluator_version is {type(version).__name__}, not a string")
    worse = entry.get("higher_is_worse", False)
    if not isinstance(worse, bool):
        raise ValueError(f".higher_is_worse is {type(worse).__name__}, not true or false")
    lowest, highest = (_bound(entry.get(key)) for key in ("lowest", "highest"))
    return ScorerSummary(scored, valued, mean, variance, passed, failed, version, worse, lowest, highest)


def _bound(value: Any) -> float | None:
    """The least or greatest value scored, which older summaries lack: a finite number or None
    (a bad one only widens nothing: the mean's interval then keeps to [0, 1])."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _count(entry: dict[str, Any], key: str) -> int:
    value = entry.get(key)
    if type(value) is not int:
        raise ValueError(f".{key} is {_kind(value)}, not a whole number")
    if not 0 <= value <= MAX_COUNT:
        raise ValueError(f".{key} is {value}, outside 0..{MAX_COUNT:,}")
    return value


def _number(entry: dict[str, Any], key: str, largest: float, *, allowed: bool) -> float | None:
    """A mean or a variance: null, or a finite number of at most `largest` in magnitude, present
    only when `allowed` (enough valued runs for it)."""
    if key not in entry:
        raise ValueError(f".{key} is missing")
    value = entry[key]
    if value is None:
        return None
    if not allowed:
        raise ValueError(f".{key} is {value!r}, with too few valued runs to have one")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f".{key} is {_kind(value)}, not a number")
    number = float(value)
    if not math.isfinite(number) or abs(number) > largest:
        raise ValueError(f".{key} is {value!r}, not a finite number of at most {largest:g}")
    return number


def _kind(value: Any) -> str:
    return (
        "missing"
        if value is None
        else repr(value)
        if isinstance(value, (int, float))
        else type(value).__name__
    )


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
        return self.verdict in ("regression", "incomparable")

    def text(self) -> str:
        if self.statistic is None or self.difference is None:
            return self.note
        return (
            f"{self.statistic} {self.baseline:.3f} -> {self.current:.3f} ({self.difference:+.3f}, "
            f"interval {self.low:+.3f}..{self.high:+.3f}): {self.note}"
        )


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
        assert now.mean is not None and before.mean is not None
        low, high = welch(
            (now.mean, now.variance or 0.0, now.valued),
            (before.mean, before.variance or 0.0, before.valued),
            confidence,
        )
        baseline_value, current_value = before.mean, now.mean
    else:
        return Comparison(name, "not_compared", "nothing to compare (no scored runs on one side)")
    if not all(math.isfinite(number) for number in (baseline_value, current_value, low, high)):
        return Comparison(name, "incomparable", f"the {statistic} gives no finite interval: FAIL")
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
