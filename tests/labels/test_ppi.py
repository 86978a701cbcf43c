"""The prediction-powered estimate against the reference implementation, ppi-python 0.2.3 (not a
dependency: it brings numba, scipy, scikit-learn and statsmodels). Its figures were computed once
with

    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
    ppi_mean_pointestimate(Y, Yhat, JUDGED, lam=1, w=w, w_unlabeled=w_unlabeled)
    ppi_mean_ci(Y, Yhat, JUDGED, alpha=0.05, lam=1, w=w, w_unlabeled=w_unlabeled)

on the arrays below (lam=1: classical PPI, no power tuning), unweighted (w = None) and with the
inclusion weights 1/p; they are held here as constants."""

from __future__ import annotations

import pytest

from otel_scorers.labels.agreement import Agreement
from otel_scorers.labels.join_records import JudgeScore, Label
from otel_scorers.labels.ppi import PpiSums, estimates

JUDGED = (0.9, 0.2, 0.75, 1.0, 0.0, 0.6, 0.85, 0.4, 1.0, 0.3, 0.55, 0.7)
PROBABILITIES = (1.0, 0.5, 0.25, 1.0, 0.5, 0.2, 1.0, 0.25, 0.5, 1.0, 0.4, 0.8)
LABELLED = (0, 1, 2, 5, 7, 10)  # which judged runs people labelled
Y = (1.0, 0.0, 0.5, 0.8, 0.4, 0.9)  # what they said

REFERENCE = {
    "unweighted": (0.6375, 0.3935616243302813, 0.8814383756697186),
    "weighted": (0.603043697903511, 0.3052970693798819, 0.9007903264271403),
}


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_the_corrected_estimate_and_interval_are_ppi_pythons(weighted: bool) -> None:
    judged, labelled = PpiSums(), PpiSums()
    for value, probability in zip(JUDGED, PROBABILITIES, strict=True):
        judged.add_judged(value, probability if weighted else 1.0)
    for index, person in zip(LABELLED, Y, strict=True):
        labelled.add_labelled(person, JUDGED[index], PROBABILITIES[index] if weighted else 1.0)
    figures = estimates(judged, labelled)
    point, low, high = REFERENCE["weighted" if weighted else "unweighted"]
    assert figures["corrected_estimate"] == pytest.approx(point, abs=1e-12)
    assert figures["corrected_low"] == pytest.approx(low, abs=1e-12)
    assert figures["corrected_high"] == pytest.approx(high, abs=1e-12)
    assert figures["labelled"] == 6 and figures["judged"] == 12


def test_the_judge_only_estimate_is_the_inclusion_weighted_mean() -> None:
    judged = PpiSums()
    for value, probability in zip(JUDGED, PROBABILITIES, strict=True):
        judged.add_judged(value, probability)
    weights = [1 / p for p in PROBABILITIES]
    expected = sum(w * f for w, f in zip(weights, JUDGED, strict=True)) / sum(weights)
    figures = estimates(judged, PpiSums())
    assert figures["judge_estimate"] == pytest.approx(expected, abs=1e-12)
    assert figures["judge_low"] < expected < figures["judge_high"]
    assert figures["corrected_estimate"] is None  # no labels, no correction


def test_the_live_agreement_carries_both_estimates_with_the_sampling_weights() -> None:
    agreement = Agreement()
    agreement.add_scores(
        JudgeScore("tox", n + 1, 1, value, None, "v1", probability)
        for n, (value, probability) in enumerate(zip(JUDGED, PROBABILITIES, strict=True))
    )
    agreement.add_labels(
        Label("tox", index + 1, 1, value=person) for index, person in zip(LABELLED, Y, strict=True)
    )
    figures = agreement.snapshot()[("tox", "v1")]
    point, low, high = REFERENCE["weighted"]
    assert figures["value"]["corrected_estimate"] == pytest.approx(point, abs=1e-12)
    assert (figures["value"]["corrected_low"], figures["value"]["corrected_high"]) == pytest.approx(
        (low, high)
    )
    assert figures["value_pairs"] == 6 and figures["spearman"] is not None


def test_pass_rate_estimates_and_their_intervals_stay_within_0_and_1() -> None:
    """A judge that passes five runs, people who pass one of the two they labelled and fail the
    other: the correction is 1 - 0.5 = 0.5 ± 1.96·sqrt(0.25 / 2) = [-0.193, 1.193] as a normal
    interval, which no pass rate can be: it is [0, 1]. The judge-only figures stay at 1."""
    agreement = Agreement()
    agreement.add_scores(JudgeScore("answer_ok", n, 1, 1.0, "pass", "v1", 1.0) for n in range(1, 6))
    agreement.add_labels([Label("answer_ok", 1, 1, label="pass"), Label("answer_ok", 2, 1, label="fail")])
    figures = agreement.snapshot()[("answer_ok", "v1")]["pass_rate"]
    assert figures["corrected_estimate"] == pytest.approx(0.5)
    assert (figures["corrected_low"], figures["corrected_high"]) == (0.0, 1.0)
    assert (figures["judge_low"], figures["judge_estimate"], figures["judge_high"]) == (1.0, 1.0, 1.0)


def test_a_corrected_estimate_beyond_the_values_given_is_held_to_them() -> None:
    """Judged 1, 1, 1, 0.9 (mean 0.975); people gave 1 where the judge gave 0.9 and 1: the
    correction Δ = +0.05 would make it 1.025, beyond any value either rater gave."""
    judged, labelled = PpiSums(), PpiSums()
    for value in (1.0, 1.0, 1.0, 0.9):
        judged.add_judged(value, 1.0)
    labelled.add_labelled(1.0, 0.9, 1.0)
    labelled.add_labelled(1.0, 1.0, 1.0)
    figures = estimates(judged, labelled)
    assert figures["rectifier"] == pytest.approx(0.05)
    assert figures["corrected_estimate"] == 1.0 and figures["corrected_high"] == 1.0


def test_values_beyond_0_and_1_widen_the_range_an_estimate_is_held_to() -> None:
    judged = PpiSums()
    for value in (0.0, 10.0, 10.0):
        judged.add_judged(value, 1.0)
    figures = estimates(judged, PpiSums())
    assert figures["judge_estimate"] == pytest.approx(20 / 3)
    assert 1.0 < figures["judge_high"] <= 10.0 and figures["judge_low"] >= 0.0
