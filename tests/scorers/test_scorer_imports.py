"""Every scorer lives under `otel_scorers.scorers`; the public imports of its former homes keep working."""

from __future__ import annotations


def test_checks_and_the_judge_importable_from_the_package_and_their_former_modules() -> None:
    from otel_scorers import checks, scorer
    from otel_scorers.checks import includes as former_includes
    from otel_scorers.judge import Judge as FormerJudge
    from otel_scorers.scorers import checks as home_checks
    from otel_scorers.scorers.judge import Judge
    from otel_scorers.scorers.protocol import Scorer
    from otel_scorers.scorers.protocol import scorer as home_scorer

    assert former_includes is home_checks.includes is checks.includes
    assert FormerJudge is Judge
    assert scorer is home_scorer
    assert isinstance(checks.includes("x"), Scorer)
