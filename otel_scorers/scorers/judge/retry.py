"""Which judge failures are worth retrying, and how long to wait before the next attempt."""

from __future__ import annotations

import asyncio
import random

_BACKOFF_BASE_S = 0.25
_BACKOFF_CAP_S = 8.0


def classify(exc: BaseException) -> tuple[str, bool, float | None]:
    """(error type, worth retrying, seconds the server asked us to wait)."""
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
    """The wait a 429/5xx response asked for (`retry-after-ms`, `retry-after` in seconds)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or getattr(exc, "litellm_response_headers", None)
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms") is not None:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        if headers.get("retry-after") is not None:
            return max(0.0, float(headers["retry-after"]))
    except (TypeError, ValueError):
        return None  # an HTTP date: rare from LLM providers; fall back to our own backoff
    return None


def backoff_s(attempt: int) -> float:
    """Exponential backoff with jitter: 0.25 s, 0.5 s, 1 s... capped at 8 s, each times 0.5..1."""
    return min(_BACKOFF_CAP_S, _BACKOFF_BASE_S * 2.0**attempt) * random.uniform(0.5, 1.0)
