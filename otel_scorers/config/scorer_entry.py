"""A `scorers:` entry as the configuration file writes it: which scorer, its name, arguments,
sampling, filter and limits. `bindings.py` makes each entry a binding; `schema.py`'s `Config`
holds the list."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from otel_scorers.scorers.judge.masking import RedactConfig
from otel_scorers.selection.binding import DEFAULT_TIMEOUT_S
from otel_scorers.selection.paced_sampling import PacingPolicy, parse_sampling
from otel_scorers.selection.sampling import MAX_PER_MINUTE
from otel_scorers.setting_bounds import MAX_SECONDS

# `.inf` and `.nan` are valid YAML floats but never a valid timeout, rate or threshold.
_STRICT = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class SamplingConfig(BaseModel):
    """A fixed rate, or (judge scorers) a budget with risk weights: `paced_sampling`."""

    model_config = _STRICT
    rate: float | None = Field(None, ge=0.0, le=1.0)
    usd_per_hour: float | None = Field(None, gt=0)
    calls_per_hour: float | None = Field(None, gt=0)
    weights: dict[str, Any] | None = None  # checked by `RiskWeights.from_mapping`, naming the key
    feedback_attribute: str | None = None
    # What one signal or one tenant can take of the budget: checked by `paced_sampling`, naming the key.
    max_signal_share: Any = None
    share_key: Any = None
    max_key_share: Any = None


class ScorerConfig(BaseModel):
    model_config = _STRICT
    type: str
    name: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    sampling: SamplingConfig = SamplingConfig()
    filter: dict[str, Any] | None = None
    threshold: float | None = None
    max_per_minute: int | None = Field(None, ge=1, le=MAX_PER_MINUTE)
    timeout_s: float = Field(DEFAULT_TIMEOUT_S, gt=0, le=MAX_SECONDS)
    context: list[str] | str | None = None  # replaces the run's context: texts, or a path into the run
    #: Judge scorers: private text masked before the judge sees it, over the judge's `redact:`.
    redact: RedactConfig | None = None
    # What a custom scorer cannot do without: skipped, not scored, when the trace lacks it.
    needs: (
        list[
            Literal[
                "input", "output", "tool_arguments", "tool_results", "tool_errors", "tool_calls", "agent_name"
            ]
        ]
        | None
    ) = None

    def sampling_policy(self, path: str = "sampling") -> float | PacingPolicy:
        """The entry's `sampling:` as a rate or a budget; a `ConfigError` at `path` when neither."""
        return parse_sampling(self.sampling.model_dump(exclude_none=True), path)
