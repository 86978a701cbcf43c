"""How often the judge agrees with people: human labels joined with the judge's scores of the same
runs, and the figures that follow, per scorer and evaluator version.

A `Label` is a person's verdict on a run (its trace and span ids) or a conversation (its id):
the scorer it is about, a value and/or a label, who gave it and why. `LabelJoin` pairs each label
with the judge's score of the same run and scorer, whichever arrives first waiting for the
other, within `wait_s` and at most `max_pending` of each side (the oldest make room, counted as
expired). A score waits for any number of labels (two reviewers, two labels); a label that finds
no score in time is *unpaired*: counted by scorer, never dropped silently.

`Agreement` keeps, per (scorer, evaluator version): the pairs; for labels, the confusion counts
(agreement, Cohen's κ and each side's base rates follow); for values, the mean absolute
difference and Spearman's rank correlation (over the last `MAX_VALUE_PAIRS` pairs); and the sums
the prediction-powered estimate needs (`ppi.py`).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from otel_scorers.fork_safety import renew_in_child
from otel_scorers.labels.agreement_figures import kappa_figures, spearman
from otel_scorers.labels.join_records import JudgeScore, Label, Pair
from otel_scorers.labels.label_gate import Admitted, LabelGate
from otel_scorers.labels.label_ranges import ValueRange
from otel_scorers.labels.ppi import PpiSums, estimates

#: Value pairs kept per scorer and version for the rank correlation (the other figures are sums).
MAX_VALUE_PAIRS = 10_000


DEFAULT_WAIT_S = 3600.0


#: Waiting entries of each side (a score waits under its run, and under its conversation too):
#: about 320 bytes each, so some 6 MB at most for the scores by default.
DEFAULT_MAX_PENDING = 20_000


#: What a waiting label is counted as: `ENTRY_BYTES` with up to `ENTRY_TEXT_CHARS` characters
#: of text, and 4 bytes for each character more, so that labels with long comments make room as
#: many short ones would: the labels waiting hold at most about `max_pending` x `ENTRY_BYTES`.
ENTRY_BYTES = 320


ENTRY_TEXT_CHARS = 64


#: Most scorer names counted apart in the label counts: a label names any scorer it likes, and
#: past this the rest are counted together under `OTHER_SCORERS`, as a metric's cardinality limit does.
MAX_SCORER_NAMES = 1000


OTHER_SCORERS = "(other)"


#: The label whose rate is estimated (a binary check's and a thresholded scorer's "reached").
PASS = "pass"


@dataclass
class ScorerAgreement:
    """One scorer and version's running figures."""

    pairs: int = 0
    confusion: dict[tuple[str, str], int] = field(default_factory=dict)  # (judge, person) -> count
    value_pairs: int = 0
    absolute_difference: float = 0.0
    values: deque[tuple[float, float]] = field(default_factory=lambda: deque(maxlen=MAX_VALUE_PAIRS))
    ppi_value: PpiSums = field(default_factory=PpiSums)  # label - judge on values
    ppi_pass: PpiSums = field(default_factory=PpiSums)  # on passing (1) or not (0)
    disagreements: deque[Pair] = field(default_factory=lambda: deque(maxlen=100))

    def add(self, pair: Pair) -> None:
        self.pairs += 1
        judge, person = pair.score, pair.label
        agreed = True
        if judge.label is not None and person.label is not None:
            key = (judge.label, person.label)
            self.confusion[key] = self.confusion.get(key, 0) + 1
            agreed = judge.label == person.label
            self.ppi_pass.add_labelled(
                float(person.label == PASS), float(judge.label == PASS), judge.probability
            )
        if judge.value is not None and person.value is not None:
            self.value_pairs += 1
            self.absolute_difference += abs(judge.value - person.value)
            self.values.append((judge.value, person.value))
            self.ppi_value.add_labelled(person.value, judge.value, judge.probability)
            agreed = agreed and judge.value == person.value
        if not agreed:
            self.disagreements.append(pair)

    def figures(self) -> dict[str, Any]:
        """agreement, kappa, base rates (judge_rate, human_rate per label), mean_absolute_difference,
        spearman: each None when there is nothing to compute it from."""
        labelled = sum(self.confusion.values())
        figures: dict[str, Any] = {
            "pairs": self.pairs,
            "label_pairs": labelled,
            "value_pairs": self.value_pairs,
        }
        figures.update(kappa_figures(self.confusion))
        figures["mean_absolute_difference"] = (
            self.absolute_difference / self.value_pairs if self.value_pairs else None
        )
        figures["spearman"] = spearman(list(self.values)) if len(self.values) >= 2 else None
        return figures


def label_bytes(label: Label) -> int:
    """What a waiting label is counted as (`ENTRY_BYTES`, more for a long text)."""
    texts = (label.scorer, label.label, label.reviewer, label.comment, label.conversation_id)
    return ENTRY_BYTES + 4 * max(0, sum(len(text) for text in texts if text is not None) - ENTRY_TEXT_CHARS)


class LabelJoin:
    """Labels and judge scores of the same run and scorer, paired; `on_pair` gets each pair,
    `on_expired(side, scorer)` each one that waited in vain or made room ("label" ones are
    unpaired labels). Thread-safe; `clock` is injectable."""

    def __init__(
        self,
        on_pair: Callable[[Pair], None],
        on_expired: Callable[[str, str], None],
        *,
        wait_s: float = DEFAULT_WAIT_S,
        max_pending: int = DEFAULT_MAX_PENDING,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if wait_s <= 0 or max_pending < 1:
            raise ValueError("wait_s must be positive and max_pending at least 1")
        self._on_pair = on_pair
        self._on_expired = on_expired
        self.wait_s = wait_s
        self.max_pending = max_pending
        self._clock = clock
        self._scores: OrderedDict[tuple[Any, ...], tuple[float, JudgeScore]] = OrderedDict()
        self._labels: OrderedDict[tuple[Any, ...], tuple[float, list[Label]]] = OrderedDict()
        self._label_count = 0
        self._label_bytes = 0
        self._lock = threading.Lock()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        self._lock = threading.Lock()

    @property
    def pending(self) -> tuple[int, int]:
        """(scores, labels) waiting."""
        return len(self._scores), self._label_count

    def add_scores(self, scores: Iterable[JudgeScore]) -> None:
        pairs: list[Pair] = []
        expired: list[tuple[str, str]] = []
        with self._lock:
            now = self._clock()
            self._expire(now, expired)
            for score in scores:
                for key in score.join_keys():
                    waiting = self._labels.pop(key, None)
                    if waiting is not None:
                        self._forget(waiting[1])
                        pairs.extend(Pair(score, label) for label in waiting[1])
                    self._scores.pop(key, None)
                    self._scores[key] = (now, score)
                while len(self._scores) > self.max_pending:
                    _, (_, old) = self._scores.popitem(last=False)
                    expired.append(("score", old.scorer))
        self._report(pairs, expired)

    def add_labels(self, labels: Iterable[Label]) -> None:
        pairs: list[Pair] = []
        expired: list[tuple[str, str]] = []
        with self._lock:
            now = self._clock()
            self._expire(now, expired)
            for label in labels:
                found = self._scores.get(label.key)
                if found is not None:
                    pairs.append(Pair(found[1], label))
                    continue
                waiting = self._labels.get(label.key)
                if waiting is None:
                    self._labels[label.key] = (now, [label])
                else:
                    waiting[1].append(label)
                self._label_count += 1
                self._label_bytes += label_bytes(label)
                while self._label_bytes > self.max_pending * ENTRY_BYTES:
                    _, (_, old) = self._labels.popitem(last=False)
                    self._forget(old)
                    expired.extend(("label", item.scorer) for item in old)
        self._report(pairs, expired)

    def expire(self) -> None:
        """Let what waited past `wait_s` go (also done on every add)."""
        expired: list[tuple[str, str]] = []
        with self._lock:
            self._expire(self._clock(), expired)
        self._report([], expired)

    def close(self) -> None:
        """Every label still waiting is unpaired now (at shutdown, or at the end of a file)."""
        expired: list[tuple[str, str]] = []
        with self._lock:
            for _, labels in self._labels.values():
                expired.extend(("label", label.scorer) for label in labels)
            self._labels.clear()
            self._label_count = self._label_bytes = 0
        self._report([], expired)

    def _expire(self, now: float, expired: list[tuple[str, str]]) -> None:
        cutoff = now - self.wait_s
        while self._scores:
            key, (at, score) = next(iter(self._scores.items()))
            if at > cutoff:
                break
            del self._scores[key]
            expired.append(("score", score.scorer))
        while self._labels:
            key, (at, labels) = next(iter(self._labels.items()))
            if at > cutoff:
                break
            del self._labels[key]
            self._forget(labels)
            expired.extend(("label", label.scorer) for label in labels)

    def _forget(self, labels: list[Label]) -> None:
        self._label_count -= len(labels)
        self._label_bytes -= sum(label_bytes(label) for label in labels)

    def _report(self, pairs: list[Pair], expired: list[tuple[str, str]]) -> None:
        for pair in pairs:
            self._on_pair(pair)
        for side, scorer in expired:
            self._on_expired(side, scorer)


class Agreement:
    """The join and the figures per (scorer, evaluator version), with the counts of what did not
    pair. `add_scores(scores)` takes the judge's side (every scored result: those with a value feed
    the judge-only estimate too), `add_labels(labels)` the people's."""

    def __init__(
        self,
        *,
        wait_s: float = DEFAULT_WAIT_S,
        max_pending: int = DEFAULT_MAX_PENDING,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lock = threading.Lock()
        self.by_scorer: dict[tuple[str, str], ScorerAgreement] = {}
        #: (scorer, version) -> the judge's side of the estimates: every scored value and
        #: label, weighted
        self.judged_values: dict[tuple[str, str], PpiSums] = {}
        self.judged_passes: dict[tuple[str, str], PpiSums] = {}
        self.unpaired: dict[str, int] = {}
        self.expired: dict[tuple[str, str], int] = {}  # (side, scorer) -> count
        self.labels_received: dict[str, int] = {}
        #: Label records that were not valid labels (no scorer to count them by).
        self.labels_rejected = 0
        #: Labels taken before (the same scorer, run and reviewer): OTLP delivers at least once.
        self.labels_duplicate = 0
        self._gate = LabelGate()
        self._changes = 0  # what the last snapshot was made at: the metrics read it several times
        self._snapshot: tuple[int, dict[tuple[str, str], dict[str, Any]]] = (-1, {})
        self.join = LabelJoin(self._pair, self._expired, wait_s=wait_s, max_pending=max_pending, clock=clock)
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        self._lock = threading.Lock()

    def add_scores(self, scores: Iterable[JudgeScore]) -> None:
        kept = list(scores)
        with self._lock:
            self._changes += 1
            for score in kept:
                key = (score.scorer, score.version)
                if score.value is not None:
                    sums = self.judged_values.get(key)
                    if sums is None:
                        sums = self.judged_values[key] = PpiSums()
                    sums.add_judged(score.value, score.probability)
                if score.label is not None:
                    sums = self.judged_passes.get(key)
                    if sums is None:
                        sums = self.judged_passes[key] = PpiSums()
                    sums.add_judged(float(score.label == PASS), score.probability)
        self.join.add_scores(kept)

    def add_labels(self, labels: Iterable[Label]) -> Admitted:
        """Take people's labels: each once (a redelivered one is a duplicate), checked and bounded
        (`label_gate`); those refused count as rejected. Returns what became of them."""
        with self._lock:
            admitted = self._gate.admit(labels)
            kept = admitted.labels
            self.labels_duplicate += admitted.duplicates
            self.labels_rejected += admitted.refused
            for label in kept:
                name = _bounded(self.labels_received, label.scorer)
                self.labels_received[name] = self.labels_received.get(name, 0) + 1
        self.join.add_labels(kept)
        return admitted

    def expect(self, ranges: Mapping[str, ValueRange]) -> None:
        """The values each scorer's labels may take (`label_ranges.scoring_ranges`): a label
        outside its scorer's range is refused, counted as rejected."""
        with self._lock:
            self._gate.ranges = dict(ranges)

    def reject(self, count: int) -> None:
        """Label records that could not be read as labels (said where they arrived)."""
        with self._lock:
            self.labels_rejected += count

    def close(self) -> None:
        self.join.close()

    def snapshot(self) -> dict[tuple[str, str], dict[str, Any]]:
        """Per (scorer, version): `ScorerAgreement.figures()`, and the estimates (`ppi.estimates`)
        of the mean value (`value`) and the pass rate (`pass_rate`), where the judge gave them."""
        self.join.expire()
        with self._lock:
            if self._snapshot[0] == self._changes:
                return self._snapshot[1]
            out: dict[tuple[str, str], dict[str, Any]] = {}
            for key in {*self.by_scorer, *self.judged_values, *self.judged_passes}:
                stats = self.by_scorer.get(key) or ScorerAgreement()
                figures = stats.figures()
                for name, judged, labelled in (
                    ("value", self.judged_values.get(key), stats.ppi_value),
                    ("pass_rate", self.judged_passes.get(key), stats.ppi_pass),
                ):
                    if judged is not None:
                        figures[name] = estimates(judged, labelled)
                out[key] = figures
            self._snapshot = (self._changes, out)
            return out

    def _pair(self, pair: Pair) -> None:
        key = (pair.score.scorer, pair.score.version)
        with self._lock:
            self._changes += 1
            stats = self.by_scorer.get(key)
            if stats is None:
                stats = self.by_scorer[key] = ScorerAgreement()
            stats.add(pair)

    def _expired(self, side: str, scorer: str) -> None:
        with self._lock:
            self._changes += 1
            scorer = _bounded(self.unpaired, scorer)
            self.expired[(side, scorer)] = self.expired.get((side, scorer), 0) + 1
            if side == "label":
                self.unpaired[scorer] = self.unpaired.get(scorer, 0) + 1


def _bounded(counts: Mapping[str, int], scorer: str) -> str:
    return scorer if scorer in counts or len(counts) < MAX_SCORER_NAMES else OTHER_SCORERS
