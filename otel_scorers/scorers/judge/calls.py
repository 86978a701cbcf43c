"""The `Judge`: sends prompts to the judge model through litellm, within one score's deadline.

One `Judge` is shared by the judge bindings of a pipeline: it owns the concurrency limit (a
semaphore across all of them), the hourly cost budget, and a bounded cache. `ask()` sends a
prompt, reads one JSON object of the expected shape out of the reply, and asks once more with
the parse error when that fails. `complete()` retries timeouts, 429 (honouring Retry-After) and
5xx with exponential backoff and jitter, within the score's deadline. A failure is a
`JudgeError` with a stable `type` (it becomes the score's `error.type`) and the underlying
exception as its `cause`, never anything else.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

from otel_scorers.fork_safety import renew_in_child, renew_module_state_in_child
from otel_scorers.scorers.judge import provider
from otel_scorers.scorers.judge.budget import CostBudget
from otel_scorers.scorers.judge.cache import BoundedCache
from otel_scorers.scorers.judge.config import ENV_MODEL, JudgeConfig
from otel_scorers.scorers.judge.errors import JudgeError, describe_cause
from otel_scorers.scorers.judge.repair import JudgeParseError, parse_reply
from otel_scorers.scorers.judge.request import judge_request
from otel_scorers.scorers.judge.retry import backoff_s, classify
from otel_scorers.scorers.judge.usage import Completion, Message, Tally, completion_of, judge_cost
from otel_scorers.throttled_log import throttled

T = TypeVar("T")
_MAX_REPLY_IN_REPAIR = 4000
#: Output tokens a model's first call is expected to cost, before it has replied once.
_EXPECTED_OUTPUT_TOKENS = 400


class Judge:
    """Calls the judge model for every judge binding that shares it. Safe to share across
    threads and event loops; nothing here imports litellm until the first call."""

    def __init__(self, config: JudgeConfig | None = None) -> None:
        self.config = config or JudgeConfig.from_env()
        self.cache = BoundedCache(self.config.cache_size)
        budget = self.config.cost_budget_usd_per_hour
        self.budget = CostBudget(budget) if budget is not None else None
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()
        self._output_tokens: dict[str, int] = {}  # per model, its last reply's: the next call's estimate
        self._resume_at = 0.0  # time.monotonic() before which no call goes out (Retry-After)
        self._inflight: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[Hashable, asyncio.Future[Any]]
        ]
        self._inflight = weakref.WeakKeyDictionary()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        """A forked child (gunicorn, uvicorn workers) must not inherit a lock another thread held
        at fork time, nor semaphores of the parent's loops."""
        self._lock = threading.Lock()
        self._semaphores = weakref.WeakKeyDictionary()
        self._inflight = weakref.WeakKeyDictionary()
        self.cache.after_fork()
        if self.budget is not None:
            self.budget.after_fork()

    def resolve_model(self, model: str | None) -> str:
        """The model a scorer uses: its own, else the judge config's, else the environment's."""
        resolved = model or self.config.model or os.environ.get(ENV_MODEL)
        if not resolved:
            raise ValueError(
                f"no judge model: pass model='provider/name', set judge.model in the config, or set {ENV_MODEL}"
            )
        return resolved

    def tally(self, model: str) -> Tally:
        """Start one score's judge work: its deadline is `timeout_s` from now."""
        deadline = time.monotonic() + self.config.timeout_s
        return Tally(model, deadline, transcript=[] if self.config.record_prompts else None)

    def check_budget(self) -> None:
        """`JudgeError("budget")` when the hourly budget is spent: checked before any call."""
        if self.budget is not None and self.budget.exhausted():
            self._budget_spent()

    def _budget_spent(self) -> None:
        assert self.budget is not None
        throttled.warning(
            "judge_budget",
            "otel_scorers: the judge's hourly cost budget ($%g) is spent; skipping judge scores",
            self.budget.usd_per_hour,
        )
        raise JudgeError(
            "budget",
            f"the judge's hourly cost budget (${self.budget.usd_per_hour:g}) is spent; "
            "judge scorers resume as it refills",
        )

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        with self._lock:
            semaphore = self._semaphores.get(loop)
            if semaphore is None:
                semaphore = self._semaphores[loop] = asyncio.Semaphore(self.config.concurrency)
            return semaphore

    async def once(self, key: Hashable, compute: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """The cached answer for `key`, or `compute()`'s, cached; True when it was not computed
        here. Callers asking the same thing at the same time wait for the first one's answer
        instead of paying for their own call; if that one fails, each tries on its own."""
        cached = self.cache.get(key)
        if cached is not None:
            return cached, True
        loop = asyncio.get_running_loop()
        with self._lock:
            inflight = self._inflight.get(loop)
            if inflight is None:
                inflight = self._inflight[loop] = {}
        pending = inflight.get(key)
        if pending is not None:
            try:
                return await asyncio.shield(pending), True
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise  # this caller was cancelled, not the one it waited for
        future: asyncio.Future[Any] = loop.create_future()
        inflight[key] = future
        try:
            value = await compute()
        except BaseException:
            future.cancel()  # the callers waiting on it try on their own
            raise
        finally:
            if inflight.get(key) is future:
                del inflight[key]
        self.cache.put(key, value)
        future.set_result(value)
        return value, False

    async def ask(
        self,
        messages: Sequence[Message],
        shape: Any,
        tally: Tally,
        *,
        name: str | None = None,
        max_tokens: int | None = None,
    ) -> Any:
        """The reply parsed as `shape`. One repair round with the parse error, then
        `judge_invalid_response`. `name` (the scorer's) and `max_tokens` go to `judge_request`."""
        model = tally.model
        completion = await self.complete(messages, tally, shape, name=name, max_tokens=max_tokens)
        try:
            return parse_reply(completion.text, shape)
        except JudgeParseError as exc:
            repair = [
                *messages,
                {"role": "assistant", "content": completion.text[:_MAX_REPLY_IN_REPAIR]},
                {
                    "role": "user",
                    "content": f"That reply could not be used: {exc}. "
                    "Reply again with only the JSON object, in the shape asked for.",
                },
            ]
        completion = await self.complete(repair, tally, shape, name=name, max_tokens=max_tokens)
        try:
            return parse_reply(completion.text, shape)
        except JudgeParseError as exc:
            throttled.warning(
                f"judge_invalid_response:{model}",
                "otel_scorers: judge %s gave an unusable reply: %s",
                model,
                exc,
            )
            raise JudgeError(
                "judge_invalid_response",
                f"{exc}; the reply began {completion.text[:200]!r}",
                tally.usage(),
                cause=f"JudgeParseError: {exc}",
            ) from None

    async def complete(
        self,
        messages: Sequence[Message],
        tally: Tally,
        shape: Any = dict[str, Any],
        *,
        name: str | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """One judge call, retried on timeouts, 429 and 5xx while the deadline allows. Each
        attempt reserves its expected cost from the hourly budget before it is sent."""
        model = tally.model
        if not provider.litellm_loaded():  # the first import takes seconds; not the judge's slowness
            started = time.monotonic()
            await provider.load_litellm()
            tally.deadline += time.monotonic() - started
        litellm = await provider.load_litellm()
        deadline = tally.deadline
        attempt = 0
        while True:
            pause = self._resume_at - time.monotonic()
            if pause > 0:  # the provider asked every caller to hold off (429 with Retry-After)
                if time.monotonic() + pause >= deadline:
                    raise JudgeError(
                        "rate_limited",
                        f"judge {model} asked to wait {pause:.1f}s (Retry-After), past this score's deadline",
                        tally.usage(),
                    )
                await asyncio.sleep(pause)
            failure: Exception | None = None
            async with self._semaphore():
                # waiting for a slot counts against the deadline; the call gets what is left
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise JudgeError("timeout", self._no_reply(attempt), tally.usage())
                if self.config.attempt_timeout_s is not None:
                    remaining = min(remaining, self.config.attempt_timeout_s)
                reserved = self._reserve(litellm, model, messages, tally)
                try:
                    response = await asyncio.wait_for(
                        litellm.acompletion(
                            **judge_request(self.config, litellm, model, messages, shape, name, max_tokens)
                        ),
                        remaining,
                    )
                except BaseException as exc:
                    if self.budget is not None:
                        self.budget.settle(reserved, None)
                    if not isinstance(exc, Exception):
                        raise  # cancelled: the reservation is given back all the same
                    failure = exc
            if failure is not None:
                kind, retryable, retry_after = classify(failure)
                if kind == "rate_limited" and retry_after is not None:
                    # honoured by every binding sharing this judge, not only by this call
                    self._resume_at = max(self._resume_at, time.monotonic() + retry_after)
                wait = retry_after if retry_after is not None else backoff_s(attempt)
                if not retryable or attempt >= self.config.max_retries or time.monotonic() + wait >= deadline:
                    raise self._failed(failure, kind, model, attempt, tally)
                attempt += 1
                await asyncio.sleep(wait)  # outside the slot: a backing-off call does not hold one
                continue
            completion = completion_of(litellm, model, response)
            tally.add(messages, completion)
            self._output_tokens[model] = completion.output_tokens
            if self.budget is not None:
                self.budget.settle(reserved, completion.cost_usd)
            return completion

    def _reserve(self, litellm: Any, model: str, messages: Sequence[Message], tally: Tally) -> float:
        """Reserve this call's expected cost (its prompt's tokens, and as many output tokens as
        this model's last reply had) before it is sent; `JudgeError("budget")` when the hourly
        cap leaves nothing for it."""
        if self.budget is None:
            return 0.0
        expected = self._expected_cost(litellm, model, messages)
        if not self.budget.reserve(expected):
            try:
                self._budget_spent()
            except JudgeError as exc:
                exc.usage = tally.usage()
                raise
        return expected

    def _expected_cost(self, litellm: Any, model: str, messages: Sequence[Message]) -> float:
        try:
            prompt_tokens = int(litellm.token_counter(model=model, messages=[dict(m) for m in messages]))
        except Exception:
            prompt_tokens = sum(len(str(message.get("content", ""))) for message in messages) // 3
        output_tokens = self._output_tokens.get(model, _EXPECTED_OUTPUT_TOKENS)
        return judge_cost(litellm, model, prompt_tokens, output_tokens) or 0.0

    def _failed(self, failure: Exception, kind: str, model: str, attempt: int, tally: Tally) -> JudgeError:
        """The error for a call that will not be retried, logged (throttled) with its cause."""
        cause = describe_cause(failure, self._secrets())
        throttled.warning(
            f"judge:{kind}:{model}", "otel_scorers: judge %s failed: %s (%s)", model, kind, cause
        )
        after = f" after {attempt} retr{'y' if attempt == 1 else 'ies'}" if attempt else ""
        if kind == "timeout" and not str(failure).strip():
            message = f"{self._no_reply(attempt)} ({cause})"
        else:
            message = f"judge {model}{after}: {cause}"
        return JudgeError(kind, message, tally.usage(), cause=cause)

    def _secrets(self) -> tuple[str | None, ...]:
        return (self.config.api_key, os.environ.get("OTEL_SCORERS_JUDGE_API_KEY"))

    def _no_reply(self, attempts: int) -> str:
        tries = f" ({attempts + 1} attempts)" if attempts else ""
        return (
            f"no judge reply within the judge's timeout_s={self.config.timeout_s:g}s{tries}; slow model, "
            f"or more scores than concurrency={self.config.concurrency} can serve"
        )


_default_judge: Judge | None = None
_default_lock = threading.Lock()  # not the import lock: a caller must not wait on an import


def _renew_default_lock() -> None:
    global _default_lock
    _default_lock = threading.Lock()


renew_module_state_in_child(_renew_default_lock)


def default_judge() -> Judge:
    """The process-wide judge from `OTEL_SCORERS_JUDGE_*`, for scorers not given one."""
    global _default_judge
    with _default_lock:
        if _default_judge is None:
            _default_judge = Judge(JudgeConfig.from_env())
        return _default_judge


def as_judge(judge: Judge | JudgeConfig | Mapping[str, Any] | None) -> Judge:
    """A `Judge` from itself, a `JudgeConfig`, a mapping of its fields, or None (the default)."""
    if isinstance(judge, Judge):
        return judge
    if judge is None:
        return default_judge()
    if isinstance(judge, JudgeConfig):
        return Judge(judge)
    return Judge(JudgeConfig.model_validate(dict(judge)))
