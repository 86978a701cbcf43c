"""Which judge failures are worth retrying, and how long to wait before the next attempt."""

from __future__ import annotations

import asyncio
import math
import random
from typing import Any

from otel_scorers.scorers.judge.errors import refusal_in

_BACKOFF_BASE_S = 0.25
_BACKOFF_CAP_S = 8.0
#: The longest wait a Retry-After is honoured for: a provider's `1e9` must not switch the
#: judge off for years (every binding sharing the judge holds off while it lasts).
MAX_RETRY_AFTER_S = 60.0


def classify(exc: BaseException) -> tuple[str, bool, float | None]:
    """(error type, worth retrying, seconds the server asked us to wait)."""
    refused = refusal_in(exc)
    if refused is not None:  # a reply over its bound, a redirect elsewhere: the same again
        return refused.kind, False, None
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return "timeout", True, None
    status = getattr(exc, "status_code", None)
    if status in (401, 403) or type(exc).__name__ in ("AuthenticationError", "PermissionDeniedError"):
        return "judge_auth", False, None  # the same key would be refused again
    if status == 408 or type(exc).__name__ in ("Timeout", "APITimeoutError"):
        return "timeout", True, None
    if status == 429:
        return "rate_limited", True, retry_after(exc)
    if isinstance(status, int) and status >= 500:
        return "judge_unavailable", True, retry_after(exc)
    if type(exc).__name__ in ("APIConnectionError", "ServiceUnavailableError"):
        return "judge_unavailable", True, None
    return "judge_error", False, None


def retry_after(exc: BaseException) -> float | None:
    """The wait a 429/5xx response asked for (`retry-after-ms`, `retry-after` in seconds), at
    most `MAX_RETRY_AFTER_S`. A value that is not a usable wait (negative, `nan`, `inf`, an HTTP
    date, text) is as if absent, so the usual backoff applies."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or getattr(exc, "litellm_response_headers", None)
    if not headers:
        return None
    for name, per_second in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        wait = _wait_s(headers.get(name), per_second)
        if wait is not None:
            return wait
    return None


def _wait_s(value: Any, per_second: float) -> float | None:
    try:
        wait = float(value) / per_second
    except (TypeError, ValueError):
        return None  # absent, or an HTTP date: rare from LLM providers
    if not math.isfinite(wait) or wait < 0:
        return None
    return min(wait, MAX_RETRY_AFTER_S)


def backoff_s(attempt: int) -> float:
    """Exponential backoff with jitter: 0.25 s, 0.5 s, 1 s... capped at 8 s, each times 0.5..1."""
    return min(_BACKOFF_CAP_S, _BACKOFF_BASE_S * 2.0**attempt) * random.uniform(0.5, 1.0)
