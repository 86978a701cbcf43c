"""A check's score of a run through its binding, as the engine makes it: in place, or awaited
when the check ran off the loop (a schema check of a long document: `offloaded_check`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from otel_scorers import bind
from otel_scorers.model import AgentRun, Score
from otel_scorers.pipeline.scorer_call import evaluate as evaluate_binding
from otel_scorers.scorers.protocol import Scorer


async def _awaited(pending: Awaitable[Score]) -> Score:
    return await pending


def evaluate(check: Scorer, run: AgentRun, **options: float) -> Score:
    score = evaluate_binding(bind(check, **options), run)
    return score if isinstance(score, Score) else asyncio.run(_awaited(score))
