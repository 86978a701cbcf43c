"""The judge's configuration: the YAML `judge:` section, or `JudgeConfig(...)`."""

from __future__ import annotations

import logging
import os
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveInt,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from otel_scorers.scorers.judge import models
from otel_scorers.scorers.judge.errors import remember_secret
from otel_scorers.scorers.judge.masking import RedactConfig
from otel_scorers.setting_bounds import MAX_COUNT, MAX_SECONDS

ENV_MODEL = "OTEL_SCORERS_JUDGE_MODEL"
ENV_API_BASE = "OTEL_SCORERS_JUDGE_API_BASE"
ENV_API_KEY = "OTEL_SCORERS_JUDGE_API_KEY"
_ENV = {"model": ENV_MODEL, "api_base": ENV_API_BASE, "api_key": ENV_API_KEY}
logger = logging.getLogger("otel_scorers")


class Prices(BaseModel):
    """What the judge model costs, in USD per million tokens: for models litellm cannot price
    (a self-hosted one), or to override its table."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    input_usd_per_million: float = Field(ge=0)
    output_usd_per_million: float = Field(ge=0)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_usd_per_million + output_tokens * self.output_usd_per_million) / 1e6


#: How the reply's JSON schema is sent: `auto` picks the form the provider accepts.
ReplySchema = Literal["auto", "json_schema", "json_object_schema", "json_object", "off"]


class JudgeConfig(BaseModel):
    """How judge scorers reach their model: the YAML `judge:` section, or `JudgeConfig(...)`.

    `model` is a litellm model string (`openai/gpt-4o-mini`): one litellm cannot route is
    refused here. `api_base` is an http(s) URL. `timeout_s` is the deadline for one score's judge
    work (every call and retry included); keep it below the binding's `timeout_s`.
    `attempt_timeout_s` bounds one call, so that a stalled call is retried while the deadline
    allows (default: a call may use all that is left). `api_key` unset: litellm reads the
    provider's environment variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`...); set or not, no
    key ever appears in an error or in telemetry. `cost_budget_usd_per_hour` is a cap: each call
    reserves its expected cost before it is sent, and a call whose expected cost is more than
    the whole budget is refused. `prices` (USD per million input/output tokens) price a model
    litellm cannot, or override its table; `max_calls_per_hour` caps calls whatever they cost.
    `max_prompt_tokens` bounds each request's prompt (the judged texts are cut to fit, fairly
    between question, answer and context, each cut marked; counted at 3 characters a token).
    `batch`: the judge scorers bound to one run share one call.

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
    timeout_s: float = Field(20.0, gt=0, le=MAX_SECONDS)
    attempt_timeout_s: float | None = Field(None, gt=0, le=MAX_SECONDS)
    max_retries: int = Field(3, ge=0, le=10)
    concurrency: int = Field(8, ge=1, le=MAX_COUNT)
    prices: Prices | None = None  # before the budget, whose check reads it
    cost_budget_usd_per_hour: float | None = Field(None, gt=0)
    max_calls_per_hour: int | None = Field(None, ge=1, le=MAX_COUNT)
    max_prompt_tokens: int = Field(16_000, ge=1_000, le=MAX_COUNT)
    cache_size: int = Field(1024, ge=0, le=MAX_COUNT)
    record_prompts: bool = False
    batch: bool = False
    max_output_tokens: PositiveInt | dict[str, PositiveInt] | None = None
    reply_schema: ReplySchema = "auto"
    #: Private text masked before any prompt is built (`masking.RedactConfig`): `true` for every
    #: kind, or `{kinds: [...], patterns: {name: regex}}`; a binding's own `redact:` overrides it.
    redact: RedactConfig | None = None

    @field_validator("model")
    @classmethod
    def _routable(cls, model: str | None) -> str | None:
        if model is not None:
            check_model(model)
        return model

    @field_validator("cost_budget_usd_per_hour")
    @classmethod
    def _priced(cls, budget: float | None, info: ValidationInfo) -> float | None:
        model = info.data.get("model")
        if budget is not None and isinstance(model, str):
            problem = unpriced_budget_problem(model, info.data.get("prices"), "")
            if problem is not None:
                raise ValueError(problem)
        return budget

    @field_validator("api_base")
    @classmethod
    def _http_url(cls, api_base: str | None) -> str | None:
        if api_base is not None:
            parts = urlsplit(api_base)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(
                    f"should be an http(s) URL such as http://localhost:11434 or "
                    f"https://api.example.com/v1, got {api_base!r}"
                )
        return api_base

    def model_post_init(self, context: Any, /) -> None:
        remember_secret(self.api_key)  # redacted from every error from now on

    @classmethod
    def from_env(cls) -> JudgeConfig:
        """`OTEL_SCORERS_JUDGE_MODEL`, `..._API_BASE` and `..._API_KEY`; defaults otherwise. A bad
        value is a `ValueError` naming its variable."""
        values = {field: os.environ.get(name) or None for field, name in _ENV.items()}
        try:
            return cls(**values)
        except ValidationError as exc:
            problems = [
                f"{_ENV.get(str(error['loc'][0]), error['loc'][0])}: {_message(error)}"
                for error in exc.errors(include_url=False)
            ]
            raise ValueError("; ".join(problems)) from None


def check_model(model: str) -> None:
    """A `ValueError` saying why litellm cannot route `model`. A bare name that litellm's bundled
    cost map does not know only warns when litellm fetches a newer map
    (`LITELLM_LOCAL_MODEL_COST_MAP=False`), which may know it."""
    problem = models.unknown_model(model)
    if problem is None:
        return
    if "/" not in model and not models.cost_map_is_litellms():
        logger.warning("otel_scorers: judge model %r: %s", model, problem)
        return
    raise ValueError(problem)


def unpriced_budget(config: JudgeConfig, model: str, section: str = "") -> str | None:
    """Why `config`'s cost budget cannot hold for `model`, or None: litellm has no price for it
    and the config gives none, so the budget could not count a single call (every call would go
    through). The one rule, for `JudgeConfig(...)`, a scorer's own model and the config file."""
    if config.cost_budget_usd_per_hour is None:
        return None
    return unpriced_budget_problem(model, config.prices, section)


def unpriced_budget_problem(model: str, prices: Prices | None, section: str) -> str | None:
    if prices is not None or models.price(model) is not None:
        return None
    return (
        f"litellm has no price for {model}, so a cost budget could not count its calls: give "
        f"{section}prices (input_usd_per_million, output_usd_per_million), or cap the calls with "
        f"{section}max_calls_per_hour instead"
    )


def _message(error: Any) -> str:
    context = error.get("ctx") or {}
    return str(context["error"]) if "error" in context else str(error["msg"])
