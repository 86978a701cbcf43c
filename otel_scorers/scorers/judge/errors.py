"""A judge failure: `JudgeError`, with a stable type and its cause; no secret and no prompt text in it.

Text that leaves the judge layer (an error's message and cause, a log line, an excerpt of a reply)
goes through `redact`, which removes every secret the process can see: the keys given in a judge
config, the values of the environment variables whose names say they hold a secret (the ones
litellm reads: `OPENAI_API_KEY`, `AZURE_API_KEY`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`...)
and whatever has the shape of a key or token. Text that may quote the request (a provider's
error echoes it, a judge repeats it) also goes through `without_prompt`, which cuts out every
stretch found in the prompt. `JudgeError` redacts its message and cause when it is built.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from otel_scorers.fork_safety import renew_module_state_in_child
from otel_scorers.model import BUDGET_SKIP_PREFIX, JudgeUsage, Score, ScoreError

REDACTED = "[REDACTED]"
#: Marks where `without_prompt` cut text out.
PROMPT_CUT = "[prompt text]"
_MAX_CAUSE = 500
_MAX_MESSAGE = 1000
#: How much of a judge's reply an error quotes.
MAX_EXCERPT = 80
#: A stretch of this many characters (punctuation and whitespace aside) found in the prompt is
#: prompt text, not the error's own.
PROMPT_WINDOW = 24
#: An error text is compared with the prompt over at most this many characters (the rest is cut:
#: no message keeps more than `_MAX_MESSAGE`), so that the comparison's cost is bounded.
_MAX_SCANNED = 2000
#: Letters between two windows looked up in the prompt (see `_shared_stretches`).
_STRIDE = 4
# Text is compared without ASCII punctuation and whitespace (`str.translate`: a regular
# expression takes a hundred times longer over a long prompt).
_UNCOMPARED = str.maketrans(
    dict.fromkeys(chr(code) for code in range(128) if not chr(code).isalnum())
    | dict.fromkeys("\u00a0\u2028\u2029")
)

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

# An environment variable holds a secret when a word of its name says so: litellm's provider
# variables are `<PROVIDER>_API_KEY` (`WATSONX_APIKEY`), `..._TOKEN` (`AWS_SESSION_TOKEN`,
# `AWS_BEARER_TOKEN_BEDROCK`), `..._SECRET...` (`AWS_SECRET_ACCESS_KEY`, `AZURE_CLIENT_SECRET`),
# `..._PASSWORD` and `..._CREDENTIALS` (`VERTEXAI_CREDENTIALS` may hold the JSON itself).
_SECRET_WORDS = frozenset(
    {"KEY", "APIKEY", "ZENAPIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS"}
)
# Shorter values (`1`, `true`, a region) are settings, not secrets, and would redact ordinary words.
_MIN_ENVIRONMENT_SECRET = 8
_MIN_SECRET = 4

# Keys given in a judge config (`JudgeConfig(api_key=...)` remembers its own). Process-wide, as
# the environment is: a custom scorer's error may echo the judge's key as well as a judge's.
# Replaced, never changed in place, so that `redact` reads it without a lock.
_configured: frozenset[str] = frozenset()
_configured_lock = threading.Lock()


def _renew_configured_lock() -> None:
    global _configured_lock
    _configured_lock = threading.Lock()  # a fork while a key was being added must not leave it held


renew_module_state_in_child(_renew_configured_lock)


def remember_secret(secret: str | None) -> None:
    """Redact `secret` from every text `redact` sees from now on (a key given in configuration)."""
    global _configured
    if secret and len(secret) >= _MIN_SECRET and secret not in _configured:
        with _configured_lock:
            _configured = _configured | {secret}


def is_secret_variable(name: str) -> bool:
    """True for an environment variable whose name says it holds a secret (`OPENAI_API_KEY`)."""
    return not _SECRET_WORDS.isdisjoint(name.upper().replace("-", "_").split("_"))


def environment_secrets() -> list[str]:
    """The values of the environment variables that hold secrets, read now (the environment can
    change, and errors are rare enough that reading it each time costs nothing that matters)."""
    return [
        value
        for name, value in os.environ.items()
        if len(value) >= _MIN_ENVIRONMENT_SECRET and is_secret_variable(name)
    ]


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with every secret replaced by `[REDACTED]`: the given `secrets`, the keys given in
    configuration, the environment's secrets, and anything shaped like an API key or token."""
    known = {secret for secret in secrets if secret and len(secret) >= _MIN_SECRET}
    known.update(_configured)
    known.update(environment_secrets())
    for secret in sorted(known, key=len, reverse=True):  # a secret that holds another goes whole
        text = text.replace(secret, REDACTED)
    text = _SECRETS[0].sub(REDACTED, text)
    text = _SECRETS[1].sub(REDACTED, text)
    text = _SECRETS[2].sub(lambda match: f"{match.group(1)} {REDACTED}", text)
    return _SECRETS[3].sub(lambda match: f"{match.group(1)}{REDACTED}", text)


def without_prompt(text: str, prompt: str | Iterable[Mapping[str, Any]]) -> str:
    """`text` with every stretch that is also in `prompt` (a text, or chat messages) replaced by
    `[prompt text]`; only its first 2000 characters are kept.

    Text is compared without punctuation and whitespace, so that a prompt echoed JSON-escaped or
    with its whitespace changed is still found: a stretch of `PROMPT_WINDOW` (24) of them or more
    found in the prompt is cut (always when it is 27 or more), and so is what lies between two
    cuts less than 24 apart (an escape sequence, a word the echo changed)."""
    texts = [prompt] if isinstance(prompt, str) else [str(message.get("content") or "") for message in prompt]
    haystack = "\x00".join(part.translate(_UNCOMPARED) for part in texts)
    text = text[:_MAX_SCANNED]
    if len(haystack) < PROMPT_WINDOW:
        return text
    at = [index for index, char in enumerate(text) if ord(char) not in _UNCOMPARED]
    stretches = _shared_stretches("".join(text[index] for index in at), haystack)
    if not stretches:
        return text
    parts, done = [], 0
    for start, end in stretches:
        parts += [text[done : at[start]], PROMPT_CUT]
        done = at[end - 1] + 1
    parts.append(text[done:])
    return "".join(parts)


def _shared_stretches(letters: str, haystack: str) -> list[list[int]]:
    """The stretches `[start, end)` of `letters` found in `haystack`, `PROMPT_WINDOW` long or more,
    those less than `PROMPT_WINDOW` apart merged.

    Bounded cost: a window is looked for every `_STRIDE` letters (so a stretch of
    `PROMPT_WINDOW + _STRIDE - 1` letters always contains one); a window found is followed
    along the prompt letter by letter, and its stretch's start is looked for among the
    `_STRIDE - 1` windows before it. Text that shares nothing with the prompt costs
    len(letters) / `_STRIDE` substring searches of the prompt; any text at most 2 len(letters)."""
    window, stretches = PROMPT_WINDOW, list[list[int]]()
    last = len(letters) - window
    position, after_miss = 0, True
    while 0 <= position <= last:
        found = haystack.find(letters[position : position + window])
        if found < 0:
            if position == last:
                break
            position, after_miss = min(position + _STRIDE, last), True
            continue
        start = position
        if after_miss:  # the stretch may begin in the letters skipped since the last miss
            for earlier in range(max(position - _STRIDE + 1, 0), position):
                if letters[earlier : earlier + window] in haystack:
                    start = earlier
                    break
        end, shift = position + window, found - position
        while end < len(letters) and end + shift < len(haystack) and letters[end] == haystack[end + shift]:
            end += 1
        if stretches and start - stretches[-1][1] < window:
            stretches[-1][1] = max(stretches[-1][1], end)
        else:
            stretches.append([start, end])
        position, after_miss = max(end - window + 1, position + 1), False
    return stretches


def excerpt(text: str, prompt: str | Iterable[Mapping[str, Any]] = (), limit: int = MAX_EXCERPT) -> str:
    """The start of a judge's reply for an error message: one line, secrets redacted, text of the
    prompt cut out, at most `limit` characters."""
    return _bounded(" ".join(without_prompt(redact(text), prompt).split()), limit)


def describe_cause(
    exc: BaseException,
    secrets: Iterable[str | None] = (),
    prompt: str | Iterable[Mapping[str, Any]] = (),
) -> str:
    """`ExceptionClass: message`, one line, bounded, secrets redacted, text of the `prompt` cut
    out (a provider's 400 may echo the request), and the innermost exception of its chain when
    there is one (litellm wraps a refused connection three times): what a user needs to tell a
    wrong key from a wrong URL from a provider outage."""
    secrets = tuple(secrets)
    cause = _one_line(exc, secrets)
    root, seen = exc, 0
    while seen < 16 and (root.__cause__ or root.__context__) is not None:
        root = root.__cause__ or root.__context__  # type: ignore[assignment]
        seen += 1
    if root is not exc:
        cause = f"{cause} (from {_one_line(root, secrets)})"
    return _bounded(without_prompt(cause, prompt), _MAX_CAUSE)


def _one_line(exc: BaseException, secrets: Iterable[str | None]) -> str:
    text = " ".join(str(exc).split())
    name = type(exc).__name__
    return f"{name}: {redact(text, secrets)}" if text else name


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def invalid_reply(
    problem: Exception | str, reply: str, prompt: str | Iterable[Mapping[str, Any]], usage: JudgeUsage | None
) -> JudgeError:
    """`judge_invalid_response`: what was wrong with the reply (`problem`, which may quote it) and
    how the reply began, both without secrets or text of the `prompt`."""
    said = without_prompt(redact(str(problem)), prompt)
    return JudgeError(
        "judge_invalid_response",
        f"{said}; the reply began {excerpt(reply, prompt)!r}",
        usage,
        cause=f"{type(problem).__name__}: {said}" if isinstance(problem, Exception) else None,
    )


class JudgeError(Exception):
    """A judge call that did not produce a usable reply. `type` is short and stable; it becomes
    the score's `error.type`: `timeout`, `rate_limited`, `judge_unavailable`, `judge_auth`,
    `judge_error`, `judge_invalid_response`, or `budget` (not an error: the score is skipped).
    What each means and whether it is retried: docs/llm-judges.md, "When the judge fails". `cause` is the
    underlying exception's class and message, when there was one. Both `message` and `cause`
    are redacted here, whoever builds the error."""

    def __init__(
        self, type: str, message: str, usage: JudgeUsage | None = None, cause: str | None = None
    ) -> None:
        message = _bounded(redact(message), _MAX_MESSAGE)
        super().__init__(f"{type}: {message}")
        self.type = type
        self.message = message
        self.usage = usage
        self.cause = _bounded(redact(cause), _MAX_MESSAGE) if cause is not None else None
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


class ReplyRefused(Exception):
    """The judge's reply was not read: `kind` is the error type it becomes."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def refusal_in(exc: BaseException) -> ReplyRefused | None:
    """The `ReplyRefused` behind `exc` (the provider's client wraps it in errors of its own)."""
    seen: BaseException | None = exc
    for _ in range(16):
        if seen is None:
            return None
        if isinstance(seen, ReplyRefused):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None
