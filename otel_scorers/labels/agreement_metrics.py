"""The judge's agreement with people as metrics, by scorer (`gen_ai.evaluation.name`) and
evaluator version (`otel_scorers.evaluator.version`), read from an `Agreement` when a metric
reader collects:

- `otel_scorers.agreement.pairs` (counter): labels paired with the judge's score;
- `otel_scorers.agreement.rate` and `otel_scorers.agreement.kappa` (gauges): the share of label
  pairs on which judge and person said the same label, and Cohen's κ;
- `otel_scorers.agreement.base_rate` (gauge, by `otel_scorers.agreement.rater` = judge or
  human and `gen_ai.evaluation.score.label`): how often each said each label, without which κ
  cannot be read;
- `otel_scorers.agreement.mean_absolute_difference` and `otel_scorers.agreement.spearman`
  (gauges): for values;
- `otel_scorers.estimate.judge` and `otel_scorers.estimate.corrected` (gauges, by
  `otel_scorers.estimate.quantity` = value or pass_rate and `otel_scorers.estimate.bound` =
  point, low or high): the judge-only estimate and the one corrected by the labels (`ppi.py`);
- `otel_scorers.labels.received` and `otel_scorers.labels.unpaired` (counters, by scorer): the
  labels taken in, and those no judge score of the same run came for within the wait;
- `otel_scorers.labels.rejected` (counter): label records that were not valid labels;
- `otel_scorers.labels.duplicate` (counter): labels taken before (the same scorer, run and
  reviewer), counted once: OTLP delivers at least once;
- `otel_scorers.agreement.expired` (counter, by scorer and `otel_scorers.agreement.side` = label
  or score): what waited in vain or made room (scores expire unlabelled all the time).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from opentelemetry.metrics import CallbackOptions, Meter, Observation

from otel_scorers.labels.agreement import Agreement
from otel_scorers.metrics import EVALUATION_NAME, SCORE_LABEL

EVALUATOR_VERSION = "otel_scorers.evaluator.version"


def observe_agreement(meter: Meter, agreement: Agreement) -> None:
    """Register the metrics listed above on `meter`, each read from `agreement` when collected."""
    _observe_agreement_figures(meter, agreement)
    _observe_estimates(meter, agreement)
    _observe_label_flow(meter, agreement)


def _observe_agreement_figures(meter: Meter, agreement: Agreement) -> None:
    """How far the judge and people agree: pairs, agreement rate, κ and base rates for labels;
    mean absolute difference and Spearman's correlation for values."""
    meter.create_observable_counter(
        "otel_scorers.agreement.pairs",
        [_by_scorer(agreement, "pairs")],
        "{pair}",
        "Labels paired with the judge's score.",
    )
    meter.create_observable_gauge(
        "otel_scorers.agreement.rate",
        [_by_scorer(agreement, "agreement")],
        "1",
        "Share of label pairs where judge and person agree.",
    )
    meter.create_observable_gauge(
        "otel_scorers.agreement.kappa",
        [_by_scorer(agreement, "kappa")],
        "1",
        "Cohen's kappa between the judge's and people's labels.",
    )
    meter.create_observable_gauge(
        "otel_scorers.agreement.base_rate",
        [_base_rates(agreement)],
        "1",
        "How often the judge and people said each label.",
    )
    meter.create_observable_gauge(
        "otel_scorers.agreement.mean_absolute_difference",
        [_by_scorer(agreement, "mean_absolute_difference")],
        "1",
        "Mean absolute difference of the judge's and people's values.",
    )
    meter.create_observable_gauge(
        "otel_scorers.agreement.spearman",
        [_by_scorer(agreement, "spearman")],
        "1",
        "Spearman rank correlation of the values.",
    )


def _observe_estimates(meter: Meter, agreement: Agreement) -> None:
    """The judge-only estimates and those corrected by people's labels."""
    meter.create_observable_gauge(
        "otel_scorers.estimate.judge",
        [_estimate(agreement, "judge")],
        "1",
        "The judge-only estimate and its 95% interval.",
    )
    meter.create_observable_gauge(
        "otel_scorers.estimate.corrected",
        [_estimate(agreement, "corrected")],
        "1",
        "The estimate corrected by people's labels (prediction-powered inference) and its 95% interval.",
    )


def _observe_label_flow(meter: Meter, agreement: Agreement) -> None:
    """What became of the labels and scores: taken in, rejected, unpaired, expired."""
    meter.create_observable_counter(
        "otel_scorers.labels.received",
        [_counts(agreement, lambda: dict(agreement.labels_received), (EVALUATION_NAME,))],
        "{label}",
        "Human labels taken in.",
    )
    meter.create_observable_counter(
        "otel_scorers.labels.unpaired",
        [_counts(agreement, lambda: dict(agreement.unpaired), (EVALUATION_NAME,))],
        "{label}",
        "Human labels for which no judge score of the same run came within the wait.",
    )
    meter.create_observable_counter(
        "otel_scorers.labels.rejected",
        [_total(lambda: agreement.labels_rejected)],
        "{record}",
        "Label records that were not valid labels (each reported to its sender).",
    )
    meter.create_observable_counter(
        "otel_scorers.labels.duplicate",
        [_total(lambda: agreement.labels_duplicate)],
        "{label}",
        "Labels taken before (the same scorer, run and reviewer): counted once.",
    )
    meter.create_observable_counter(
        "otel_scorers.agreement.expired",
        [
            _counts(
                agreement, lambda: dict(agreement.expired), ("otel_scorers.agreement.side", EVALUATION_NAME)
            )
        ],
        "{item}",
        "Labels and scores that waited in vain for the other, or made room.",
    )


# Each callback below reads the agreement afresh at every collection: figures are never cached.
def _by_scorer(agreement: Agreement, name: str) -> Callable[[CallbackOptions], Iterable[Observation]]:
    """One figure of every scorer and evaluator version that has it."""

    def callback(_options: CallbackOptions) -> Iterable[Observation]:
        observations = []
        for (scorer, version), figures in agreement.snapshot().items():
            value = figures.get(name)
            if value is not None:
                observations.append(Observation(value, {EVALUATION_NAME: scorer, EVALUATOR_VERSION: version}))
        return observations

    return callback


def _base_rates(agreement: Agreement) -> Callable[[CallbackOptions], Iterable[Observation]]:
    """How often each rater said each label."""

    def callback(_options: CallbackOptions) -> Iterable[Observation]:
        observations = []
        for (scorer, version), figures in agreement.snapshot().items():
            for rater in ("judge", "human"):
                for label, rate in figures[f"{rater}_rates"].items():
                    attributes = {
                        EVALUATION_NAME: scorer,
                        EVALUATOR_VERSION: version,
                        "otel_scorers.agreement.rater": rater,
                        SCORE_LABEL: label,
                    }
                    observations.append(Observation(rate, attributes))
        return observations

    return callback


def _estimate(agreement: Agreement, prefix: str) -> Callable[[CallbackOptions], Iterable[Observation]]:
    """The `prefix` estimate (judge or corrected) of each quantity, with its interval's bounds."""

    def callback(_options: CallbackOptions) -> Iterable[Observation]:
        observations = []
        for (scorer, version), figures in agreement.snapshot().items():
            for quantity in ("value", "pass_rate"):
                found = figures.get(quantity)
                if not found:
                    continue
                for bound, key in (("point", "estimate"), ("low", "low"), ("high", "high")):
                    value = found.get(f"{prefix}_{key}")
                    if value is not None:
                        attributes = {
                            EVALUATION_NAME: scorer,
                            EVALUATOR_VERSION: version,
                            "otel_scorers.estimate.quantity": quantity,
                            "otel_scorers.estimate.bound": bound,
                        }
                        observations.append(Observation(value, attributes))
        return observations

    return callback


def _counts(
    agreement: Agreement, read: Callable[[], dict[Any, int]], keys: tuple[str, ...]
) -> Callable[[CallbackOptions], Iterable[Observation]]:
    """The counts `read` returns, by `keys`; what has waited too long is expired first, so that
    the counts are current."""

    def callback(_options: CallbackOptions) -> Iterable[Observation]:
        agreement.join.expire()
        return [
            Observation(count, dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)))
            for key, count in read().items()
        ]

    return callback


def _total(count: Callable[[], int]) -> Callable[[CallbackOptions], Iterable[Observation]]:
    """A count so far (rejected or duplicate labels); nothing until there is one."""

    def callback(_options: CallbackOptions) -> Iterable[Observation]:
        found = count()
        return [Observation(found)] if found else []

    return callback
