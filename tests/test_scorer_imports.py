"""Every scorer lives under `otel_scorers.scorers`; the public imports of its former homes keep working."""

from __future__ import annotations


def test_checks_and_scorer_importable_from_the_package_and_their_former_modules() -> None:
    import otel_scorers.checks
    from otel_scorers.scorer import Scorer as FormerScorer

    from otel_scorers import checks, scorer
    from otel_scorers.scorers import checks as home_checks
    from otel_scorers.scorers.protocol import Scorer
    from otel_scorers.scorers.protocol import scorer as home_scorer

    assert checks is home_checks is otel_scorers.checks
    assert scorer is home_scorer
    assert FormerScorer is Scorer
    assert isinstance(checks.includes("x"), Scorer)
