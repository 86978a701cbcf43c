"""Custom scorers referenced from config files by import path in the tests."""

from __future__ import annotations

from otel_scorers import AgentRun, Score


def polite(run: AgentRun) -> bool:
    return "please" in (run.output or "").lower()


def length_at_most(limit: int):  # type: ignore[no-untyped-def]
    def score(run: AgentRun) -> Score:
        length = len(run.output or "")
        return Score("length", value=1.0 if length <= limit else 0.0, reason=f"{length} characters")

    return score


RUNS_PER_DAY = 1440  # not a scorer: the config tests refer to it by import path
