"""Which runs are kept, and where: `keep:` in the configuration file (the sidecar and the
processor keep runs as they score them), or `score --keep-failing` / `--keep-sample`.

    keep:
      path: failing-runs.jsonl   # an OTLP/JSON trace file, one run's trace per line
      failing: [answer_relevancy] # the runs these scorers failed; [] (the default): any scorer
      sample: 0.01                # and also this share of all scored runs (by trace id)
      max_bytes: 104857600        # the file rotates at this size...
      backups: 3                  # ...keeping this many older files (PATH.1, PATH.2, ...)

A run is failed by a scorer when the scorer labelled it `fail` (checks, and scorers given a
`threshold`); a scorer's error is not a failure of the run. The sample is decided by the trace
id, so every run of a trace is kept or none, on every replica alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from otel_scorers.conversation_turns import Conversation
from otel_scorers.keep.rotating_file import RotatingFile
from otel_scorers.keep.run_trace import run_trace_line
from otel_scorers.model import AgentRun, Score
from otel_scorers.setting_bounds import MAX_COUNT

#: 100 MiB, as the Collector's file exporter rotates by default.
DEFAULT_MAX_BYTES = 100 * 1024 * 1024
DEFAULT_BACKUPS = 3
_ID_SPACE = 1 << 64


class KeepConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    path: Path
    failing: list[str] = Field(default_factory=list)
    sample: float = Field(0.0, ge=0.0, le=1.0)
    #: None: never rotated (`score --keep-failing`, which writes a new file each time).
    max_bytes: int | None = Field(DEFAULT_MAX_BYTES, ge=4096, le=MAX_COUNT)
    backups: int = Field(DEFAULT_BACKUPS, ge=0, le=100)


def failed_by(scores: Sequence[Score], scorers: Sequence[str]) -> bool:
    """A score of one of `scorers` (any, when none are named) labelled the run `fail`."""
    return any(
        score.label == "fail"
        and score.error is None
        and score.skipped is None
        and (not scorers or score.scorer in scorers)
        for score in scores
    )


def sampled(trace_id: int, share: float) -> bool:
    """The trace is in the `share` of all traces, by the low 64 bits of its id (random in a W3C id)."""
    return share > 0 and (trace_id & (_ID_SPACE - 1)) < share * _ID_SPACE


class RunKeeper:
    """Writes the trace of each run it is told of that is to be kept. Both a score output (the
    sidecar, the processor) and a watcher of `score`'s runs."""

    def __init__(self, config: KeepConfig) -> None:
        self.config = config
        self.file = RotatingFile(config.path, config.max_bytes, config.backups)
        self.kept = 0

    def add_run(self, run: AgentRun, scores: Sequence[Score]) -> None:
        keep = failed_by(scores, self.config.failing) or sampled(run.trace_id, self.config.sample)
        if keep and self.file.append(run_trace_line(run)):
            self.kept += 1

    def add_conversation(self, conversation: Conversation, scores: Sequence[Score]) -> None:
        """Conversations are kept by their runs' traces, when those fail."""

    # As a score output (`emission.outputs.ScoreOutput`).
    emit = add_run
    emit_conversation = add_conversation

    def flush(self) -> None:
        """Every line is written as it comes."""

    def behind(self) -> bool:
        return False
