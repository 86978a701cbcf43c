"""A judge failure: `JudgeError`, with a stable type and the underlying cause, secrets redacted."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from otel_scorers.model import JudgeUsage, Score, ScoreError

#: A judge scorer skipped for cost reasons says so with this prefix (the emitter counts them).
BUDGET_SKIP_PREFIX = "budget:"
_MAX_CAUSE = 500

# What a provider's error text may echo back: API keys (OpenAI `sk-...`, Anthropic `sk-ant-...`,
# Google `AIza...`), bearer tokens, and `key=value` pairs whose name says secret.
_SECRETS = (
    re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
    re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{8,}"),
    re.compile(
        r"(?i)\b((?:api[_-]?key|x-api-key|access[_-]?token|token|secret|password)[\"']?\s*[:=]\s*[\"']?)[^\s\"',;&}]+"
    ),
)


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with API keys, tokens and the given `secrets` replaced by `[REDACTED]`."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[REDACTED]")
    text = _SECRETS[0].sub("[REDACTED]", text)
    text = _SECRETS[1].sub("[REDACTED]", text)
    text = _SECRETS[2].sub(lambda match: f"{match.group(1)} [REDACTED]", text)
    return _SECRETS[3].sub(lambda match: f"{match.group(1)}[REDACTED]", text)


def describe_cause(exc: BaseException, secrets: Iterable[str | None] = ()) -> str:
    """`ExceptionClass: message`, one line, bounded, secrets redacted, and the innermost
    exception of its chain when there is one (litellm wraps a refused connection three times):
    what a user needs to tell a wrong key from a wrong URL from a provider outage."""
    cause = _one_line(exc, secrets)
    root, seen = exc, 0
    while seen < 16 and (root.__cause__ or root.__context__) is not None:
        root = root.__cause__ or root.__context__  # type: ignore[assignment]
        seen += 1
    if root is not exc:
        cause = f"{cause} (from {_one_line(root, secrets)})"
    return cause if len(cause) <= _MAX_CAUSE else cause[: _MAX_CAUSE - 3] + "..."


def _one_line(exc: BaseException, secrets: Iterable[str | None]) -> str:
    text = " ".join(str(exc).split())
    name = type(exc).__name__
    return f"{name}: {redact(text, secrets)}" if text else name


class JudgeError(Exception):
    """A judge call that did not produce a usable reply. `type` is short and stable; it becomes
    the score's `error.type`. The kinds, what each means, and whether it is retried:

    - `timeout`: no reply within the judge's `timeout_s` (a slow model, or more scores than
      `concurrency` serves); each attempt that timed out was retried while the deadline allowed.
    - `rate_limited`: 429; retried after Retry-After (capped) or backoff, within the deadline.
    - `judge_unavailable`: 5xx, or the judge could not be reached; retried within the deadline,
      except while the connection breaker is open (the judge refused connections again and
      again): then it fails at once.
    - `judge_auth`: the provider refused the credentials (401/403), or a hosted provider's key
      is missing; never retried.
    - `judge_error`: the provider refused the request otherwise (400: a bad model name, a
      request it will not take); never retried.
    - `judge_invalid_response`: the reply is not exactly the JSON asked for (no object, an
      ambiguous one, a verdict outside the allowed set, a non-finite or out-of-range number);
      asked once more with the problem, then this.
    - `budget`: not an error: the hourly cost or call budget is spent, or one call would cost
      more than the whole budget; the score is skipped.

    `cause` is the underlying exception's class and message, secrets redacted, when there was one."""

    def __init__(
        self, type: str, message: str, usage: JudgeUsage | None = None, cause: str | None = None
    ) -> None:
        super().__init__(f"{type}: {message}")
        self.type = type
        self.message = message
        self.usage = usage
        self.cause = cause
        self.transcript: list[dict[str, Any]] | None = None  # with record_prompts: the calls made

    def to_score(self, scorer: str, details: Mapping[str, Any] | None = None) -> Score:
        """The error result (a skipped score for `budget`), with the calls it made."""
        if self.type == "budget":
            return Score(scorer, skipped=f"{BUDGET_SKIP_PREFIX} {self.message}", usage=self.usage)
        all_details: dict[str, Any] = {"judge_calls": self.usage.calls if self.usage is not None else 0}
        all_details.update(details or {})
        if self.cause is not None:
            all_details["cause"] = self.cause
        if self.transcript:
            all_details["prompts"] = self.transcript
        return Score(scorer, error=ScoreError(self.type, self.message), usage=self.usage, details=all_details)
