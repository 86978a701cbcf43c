"""The judge's configuration: the YAML `judge:` section, or `JudgeConfig(...)`."""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt

ENV_MODEL = "OTEL_SCORERS_JUDGE_MODEL"
ENV_API_BASE = "OTEL_SCORERS_JUDGE_API_BASE"
ENV_API_KEY = "OTEL_SCORERS_JUDGE_API_KEY"

#: How the reply's JSON schema is sent: `auto` picks the form the provider accepts.
ReplySchema = Literal["auto", "json_schema", "json_object_schema", "json_object", "off"]


class JudgeConfig(BaseModel):
    """How judge scorers reach their model: the YAML `judge:` section, or `JudgeConfig(...)`.

    `timeout_s` is the deadline for one score's judge work (every call and retry included);
    keep it below the binding's `timeout_s`. `attempt_timeout_s` bounds one call, so that a
    stalled call is retried while the deadline allows (default: a call may use all that is
    left). `api_key` unset: litellm reads the provider's environment variable
    (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`...). `cost_budget_usd_per_hour` is a cap: each call
    reserves its expected cost before it is sent. `batch`: the judge scorers bound to one run
    share one call.

    `max_output_tokens` bounds each reply (`max_tokens`), one bound for every call or a mapping
    of scorer name to bound (a scorer not named keeps its default: 256 for a reply of fixed
    fields, 1024 for one that holds a list); a runaway reply then cannot hold a model's slot
    until the deadline. `reply_schema` says how the reply's JSON schema is sent: `auto` (the
    form the provider accepts), `json_schema` (OpenAI's structured outputs; Ollama, vLLM, LM
    Studio), `json_object_schema` (llama.cpp's `{"type": "json_object", "schema": ...}`),
    `json_object` (JSON mode, no schema) or `off` (neither).
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
    max_output_tokens: PositiveInt | dict[str, PositiveInt] | None = None
    reply_schema: ReplySchema = "auto"

    @classmethod
    def from_env(cls) -> JudgeConfig:
        """`OTEL_SCORERS_JUDGE_MODEL`, `..._API_BASE` and `..._API_KEY`; defaults otherwise."""
        return cls(
            model=os.environ.get(ENV_MODEL) or None,
            api_base=os.environ.get(ENV_API_BASE) or None,
            api_key=os.environ.get(ENV_API_KEY) or None,
        )
