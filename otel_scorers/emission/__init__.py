"""Scores to telemetry: evaluation spans, `gen_ai.evaluation.result` events, metrics and console
lines, each an output of one `Emission` (`outputs.py`); `standard.py` chooses them."""

from otel_scorers.emission.outputs import Emission, ScoreOutput
from otel_scorers.emission.standard import standard_emission

__all__ = ["Emission", "ScoreOutput", "standard_emission"]
