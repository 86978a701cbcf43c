"""The scores the scoring side hands back for each run (its score attributes), read again as the
agreement join's judge side: the receiving process is where people's labels arrive, whichever
scoring process scored the run. What those attributes carry is a run's values and labels, not
its evaluator version or inclusion probability: here every score counts as version "" and as
scored with certainty (docs/agreement.md)."""

from __future__ import annotations

from collections.abc import Sequence

from otel_scorers.agreement import JudgeScore
from otel_scorers.emission.attributes import LABEL_ATTRIBUTE_PREFIX, SCORE_ATTRIBUTE_PREFIX
from otel_scorers.sidecar.jobs import RunScores


def scores_of_runs(results: Sequence[RunScores]) -> list[JudgeScore]:
    scores: list[JudgeScore] = []
    for key, attributes in results:
        trace_id = int.from_bytes(key[:16], "big")
        span_id = int.from_bytes(key[16:24], "big")
        values: dict[str, float] = {}
        labels: dict[str, str] = {}
        for name, value in attributes.items():
            if name.startswith(SCORE_ATTRIBUTE_PREFIX):
                values[name[len(SCORE_ATTRIBUTE_PREFIX) :]] = float(value)
            elif name.startswith(LABEL_ATTRIBUTE_PREFIX):
                labels[name[len(LABEL_ATTRIBUTE_PREFIX) :]] = str(value)
        for scorer in {*values, *labels}:
            scores.append(JudgeScore(scorer, trace_id, span_id, values.get(scorer), labels.get(scorer)))
    return scores
