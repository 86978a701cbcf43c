"""The judge layer: LLM calls through litellm for judge scorers, with everything a bill needs.

One concern per module: `config` (JudgeConfig), `errors` (JudgeError and its cause, secrets
redacted), `data` (the judged text as delimited data), `repair` (reading JSON out of a reply),
`retry` (what to retry, backoff), `budget` (the hourly cost cap), `cache`, `usage` (what calls
return and cost), `provider` (litellm, imported lazily), `request` (what one call sends: the
output bound and the reply's schema) and `calls` (the `Judge` itself).
"""

from otel_scorers.scorers.judge.budget import CostBudget
from otel_scorers.scorers.judge.cache import BoundedCache
from otel_scorers.scorers.judge.calls import Judge, as_judge, default_judge
from otel_scorers.scorers.judge.config import ENV_API_BASE, ENV_API_KEY, ENV_MODEL, JudgeConfig
from otel_scorers.scorers.judge.data import DATA_NOTICE, delimit
from otel_scorers.scorers.judge.errors import BUDGET_SKIP_PREFIX, JudgeError, describe_cause, redact
from otel_scorers.scorers.judge.provider import (
    import_litellm,
    litellm_installed,
    load_litellm,
    require_litellm,
)
from otel_scorers.scorers.judge.repair import JudgeParseError, json_objects, parse_reply
from otel_scorers.scorers.judge.retry import backoff_s
from otel_scorers.scorers.judge.usage import Completion, JudgeReply, Message, Tally, judge_cost

__all__ = [
    "BUDGET_SKIP_PREFIX",
    "DATA_NOTICE",
    "ENV_API_BASE",
    "ENV_API_KEY",
    "ENV_MODEL",
    "BoundedCache",
    "Completion",
    "CostBudget",
    "Judge",
    "JudgeConfig",
    "JudgeError",
    "JudgeParseError",
    "JudgeReply",
    "Message",
    "Tally",
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
