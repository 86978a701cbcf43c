"""The scores the scoring side hands back for each run (its score attributes, each score's
evaluator version and inclusion probability, the run's conversation id), read again as the agreement join's judge side: the
receiving process is where people's labels arrive, whichever scoring process scored the run."""

from __future__ import annotations

from collections.abc import Sequence

from otel_scorers.emission.attributes import LABEL_ATTRIBUTE_PREFIX, SCORE_ATTRIBUTE_PREFIX
from otel_scorers.labels.agreement import JudgeScore
from otel_scorers.sidecar.jobs import RunScores


def scores_of_runs(results: Sequence[RunScores]) -> list[JudgeScore]:
    scores: list[JudgeScore] = []
    for key, attributes, facts, conversation_id in results:
        known = {scorer: (version, probability) for scorer, version, probability in facts}
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
            version, probability = known.get(scorer, ("", 1.0))
            scores.append(
                JudgeScore(
                    scorer,
                    trace_id,
                    span_id,
                    values.get(scorer),
                    labels.get(scorer),
                    version,
                    probability,
                    conversation_id,
                )
            )
    return scores
