"""The judge layer: LLM calls through litellm for judge scorers, with everything a bill needs.

One concern per module: `config` (JudgeConfig), `errors` (JudgeError and its cause, secrets
redacted), `models` (which models litellm routes, and their prices, without importing it),
`data` (the judged text as delimited data), `prompt` (a `Question` as messages, within the prompt
bound), `request` (what one call sends: the output bound and the reply's schema), `repair`
(reading JSON out of a reply), `retry` (what to retry, backoff), `budget` (the hourly caps),
`breaker` (failing fast when the judge refuses connections), `batch` (one call for a run's
questions), `cache`, `usage` (what calls return and cost), `provider` (litellm, imported lazily),
`transport` (a reply read within its byte bound, no redirect elsewhere), and the `Judge`'s parts:
`single_flight` (the cache, one call for identical questions), `spend` (the hourly caps and each
call's reservation), `provider_call` (one call, its retries and the breaker), and `calls` (the
`Judge`, which composes them, and its one call path, `consult`).
"""

from otel_scorers.model import BUDGET_SKIP_PREFIX
from otel_scorers.scorers.judge.budget import CostBudget
from otel_scorers.scorers.judge.cache import BoundedCache
from otel_scorers.scorers.judge.calls import Judge, as_judge, default_judge
from otel_scorers.scorers.judge.config import ENV_API_BASE, ENV_API_KEY, ENV_MODEL, JudgeConfig, Prices
from otel_scorers.scorers.judge.data import DATA_NOTICE, delimit
from otel_scorers.scorers.judge.errors import JudgeError, describe_cause, redact
from otel_scorers.scorers.judge.prompt import Data, Question
from otel_scorers.scorers.judge.provider import (
    import_litellm,
    litellm_installed,
    load_litellm,
    require_litellm,
)
from otel_scorers.scorers.judge.repair import JudgeParseError, json_objects, parse_reply
from otel_scorers.scorers.judge.retry import backoff_s
from otel_scorers.scorers.judge.usage import Completion, Consultation, JudgeReply, Message, judge_cost

__all__ = [
    "BUDGET_SKIP_PREFIX",
    "DATA_NOTICE",
    "ENV_API_BASE",
    "ENV_API_KEY",
    "ENV_MODEL",
    "BoundedCache",
    "Completion",
    "Consultation",
    "CostBudget",
    "Data",
    "Judge",
    "JudgeConfig",
    "JudgeError",
    "JudgeParseError",
    "JudgeReply",
    "Message",
    "Prices",
    "Question",
    "as_judge",
    "backoff_s",
    "default_judge",
    "delimit",
    "describe_cause",
    "import_litellm",
    "json_objects",
    "judge_cost",
    "litellm_installed",
    "load_litellm",
    "parse_reply",
    "redact",
    "require_litellm",
]
