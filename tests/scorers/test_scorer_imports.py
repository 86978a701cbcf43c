"""Every scorer lives under `otel_scorers.scorers`; the package re-exports the public names, and
no module at the top of the package stands in for a scorer module."""

from __future__ import annotations

import importlib

import pytest


def test_checks_and_the_judge_importable_from_the_package_and_their_homes() -> None:
    from otel_scorers import Judge as PackageJudge
    from otel_scorers import checks, scorer
    from otel_scorers.scorers import checks as home_checks
    from otel_scorers.scorers.judge import Judge
    from otel_scorers.scorers.protocol import Scorer
    from otel_scorers.scorers.protocol import scorer as home_scorer

    assert checks is home_checks
    assert PackageJudge is Judge
    assert scorer is home_scorer
    assert isinstance(checks.includes("x"), Scorer)


@pytest.mark.parametrize("module", ["checks", "judge", "example_agent", "example_traffic"])
def test_no_re_export_module_at_the_top_of_the_package(module: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"otel_scorers.{module}")


def test_multi_turn_is_filed_with_the_conversation_scorers() -> None:
    from otel_scorers.scorers.conversation import multi_turn
    from otel_scorers.scorers.conversation.multi_turn import MultiTurn

    assert multi_turn.__module__ == "otel_scorers.scorers.conversation"
    assert MultiTurn.kind == "multi_turn"
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("otel_scorers.scorers.rules.multi_turn")
