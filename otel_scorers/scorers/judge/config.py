"""The judge's configuration: the YAML `judge:` section, or `JudgeConfig(...)`."""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from otel_scorers.scorers.judge.errors import remember_secret

ENV_MODEL = "OTEL_SCORERS_JUDGE_MODEL"
ENV_API_BASE = "OTEL_SCORERS_JUDGE_API_BASE"
ENV_API_KEY = "OTEL_SCORERS_JUDGE_API_KEY"


class JudgeConfig(BaseModel):
    """How judge scorers reach their model: the YAML `judge:` section, or `JudgeConfig(...)`.

    `timeout_s` is the deadline for one score's judge work (every call and retry included);
    keep it below the binding's `timeout_s`. `attempt_timeout_s` bounds one call, so that a
    stalled call is retried while the deadline allows (default: a call may use all that is
    left). `api_key` unset: litellm reads the provider's environment variable
    (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`...); set or not, no key ever appears in an error or
    in telemetry. `cost_budget_usd_per_hour` is a cap: each call
    reserves its expected cost before it is sent. `batch`: the judge scorers bound to one run
    share one call.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    model: str | None = None
    api_base: str | None = None
    api_key: str | None = Field(None, repr=False)
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    timeout_s: float = Field(20.0, gt=0)
    attempt_timeout_s: float | None = Field(None, gt=0)
    max_retries: int = Field(3, ge=0, le=10)
    concurrency: int = Field(8, ge=1)
    cost_budget_usd_per_hour: float | None = Field(None, gt=0)
    cache_size: int = Field(1024, ge=0)
    record_prompts: bool = False
    batch: bool = False

    def model_post_init(self, context: Any, /) -> None:
        remember_secret(self.api_key)  # redacted from every error from now on

    @classmethod
    def from_env(cls) -> JudgeConfig:
        """`OTEL_SCORERS_JUDGE_MODEL`, `..._API_BASE` and `..._API_KEY`; defaults otherwise."""
        return cls(
            model=os.environ.get(ENV_MODEL) or None,
            api_base=os.environ.get(ENV_API_BASE) or None,
            api_key=os.environ.get(ENV_API_KEY) or None,
        )
