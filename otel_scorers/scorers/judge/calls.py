"""The `Judge`: asks the judge model through litellm, within one deadline, and owns everything a
judge call needs around it.

One `Judge` is shared by the judge bindings of a pipeline. `consult()` is the one way a scorer's
judge work runs: the budget check, single flight and the cache, the deadline, usage, and a
failure as a `JudgeError` that carries its usage and transcript (`to_score` makes the error
result). `ask_one()` is `consult()` for one question, batched with the run's other questions when
the config says so. Below them, `ask()` renders a question within the prompt bound, reads one
JSON object of the expected shape out of the reply, and asks once more with the parse error
when that fails; `complete()` makes one call, retried on timeouts, 429 (honouring Retry-After)
and 5xx with backoff and jitter within the deadline, after reserving its expected cost and
checking the connection breaker.
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
from otel_scorers.model import JudgeUsage
from otel_scorers.scorers.judge import provider
from otel_scorers.scorers.judge.batch import Batches
from otel_scorers.scorers.judge.breaker import THRESHOLD, Breaker
from otel_scorers.scorers.judge.budget import CostBudget
from otel_scorers.scorers.judge.cache import BoundedCache
from otel_scorers.scorers.judge.config import ENV_MODEL, JudgeConfig
from otel_scorers.scorers.judge.errors import JudgeError, describe_cause, invalid_reply
from otel_scorers.scorers.judge.prompt import Question, render
from otel_scorers.scorers.judge.prompt import repair as repair_messages
from otel_scorers.scorers.judge.repair import JudgeParseError, parse_reply
from otel_scorers.scorers.judge.request import judge_request
from otel_scorers.scorers.judge.retry import backoff_s, classify
from otel_scorers.scorers.judge.usage import (
    Completion,
    Consultation,
    JudgeReply,
    Message,
    completion_of,
    judge_cost,
)
from otel_scorers.throttled_log import throttled

T = TypeVar("T")
#: Output tokens a question's first call is expected to cost, before one like it has replied.
_EXPECTED_OUTPUT_TOKENS = 256
#: How often a call refused by the budget looks again while calls in flight may give some back.
_RESERVE_POLL_S = 0.01


class Judge:
    """Calls the judge model for every judge binding that shares it. Safe to share across
    threads and event loops; nothing here imports litellm until the first call."""

    def __init__(self, config: JudgeConfig | None = None) -> None:
        self.config = config or JudgeConfig.from_env()
        self.cache = BoundedCache(self.config.cache_size)
        budget = self.config.cost_budget_usd_per_hour
        self.budget = CostBudget(budget) if budget is not None else None
        calls = self.config.max_calls_per_hour
        self.call_budget = CostBudget(float(calls)) if calls is not None else None
        self.breaker = Breaker()
        self.batches = Batches(self)
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()
        self._missing_keys: dict[str, tuple[str, ...]] = {}  # per model: the credentials it lacks
        # per (model, question name): output tokens of its replies so far (sum, count), whose
        # mean is what the next call reserves for its reply
        self._output_tokens: dict[tuple[str, str], tuple[int, int]] = {}
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
        self.cache.renew_after_fork()
        self.breaker.renew_after_fork()
        self.batches.renew_after_fork()
        for budget in (self.budget, self.call_budget):
            if budget is not None:
                budget.renew_after_fork()

    def resolve_model(self, model: str | None) -> str:
        """The model a scorer uses: its own, else the judge config's, else the environment's."""
        resolved = model or self.config.model or os.environ.get(ENV_MODEL)
        if not resolved:
            raise ValueError(
                f"no judge model: pass model='provider/name', set judge.model in the config, or set {ENV_MODEL}"
            )
        return resolved

    def consultation(self, model: str, deadline: float | None = None) -> Consultation:
        """Start one score's judge work: its deadline is `timeout_s` from now unless given."""
        if deadline is None:
            deadline = time.monotonic() + self.config.timeout_s
        return Consultation(model, deadline, transcript=[] if self.config.record_prompts else None)

    # ---- the one call path ----------------------------------------------------------------

    async def consult(
        self,
        key: Hashable,
        work: Callable[[Consultation], Awaitable[T]],
        *,
        model: str,
        deadline: float | None = None,
    ) -> JudgeReply[T]:
        """`work`'s answer for `key`: from the cache, from an identical question already being
        asked (both with zero usage), or computed now within the deadline after the budget
        check. A failure is a `JudgeError` carrying the usage and transcript so far."""
        consultation = self.consultation(model, deadline)

        async def compute() -> T:
            self.check_budget()
            return await work(consultation)

        try:
            value, cached = await self.once(key, compute)
        except JudgeError as exc:
            exc.usage = exc.usage or consultation.usage()
            exc.transcript = consultation.transcript
            raise
        if cached:
            return JudgeReply(value, JudgeUsage(model, 0, 0, 0, 0.0), cached=True)
        return JudgeReply(value, consultation.usage(), transcript=tuple(consultation.transcript or ()))

    async def ask_one(
        self, key: Hashable, question: Question, *, model: str, group: Hashable | None = None
    ) -> JudgeReply[Any]:
        """`consult()` for one question; with `batch` on, it shares a call with the other
        questions of its `group` (a run) that arrive together."""
        if group is not None and self.config.batch:
            return await self.batches.ask(key, question, model=model, group=group)
        return await self.consult(key, lambda consultation: self.ask(question, consultation), model=model)

    # ---- asking and parsing ---------------------------------------------------------------

    async def ask(self, question: Question, consultation: Consultation, *, repair: bool = True) -> Any:
        """The question's reply, parsed as its shape."""
        messages = render(question, self.config.max_prompt_tokens)
        return await self.ask_messages(
            messages, question.shape, consultation, name=question.name, repair=repair
        )

    async def ask_messages(
        self,
        messages: Sequence[Message],
        shape: Any,
        consultation: Consultation,
        *,
        name: str = "reply",
        schema: Any = None,
        repair: bool = True,
    ) -> Any:
        """The reply to `messages` parsed as `shape` (`schema`, when given, is the type whose JSON
        schema the request carries). With `repair`, one more round with the parse error; then
        `judge_invalid_response`."""
        completion = await self.complete(messages, consultation, name=name, schema=schema or shape)
        try:
            return parse_reply(completion.text, shape)
        except JudgeParseError as exc:
            if not repair:
                raise self._invalid(exc, completion, messages, consultation) from None
            problem = str(exc)
        completion = await self.complete(
            repair_messages(messages, completion.text, problem),
            consultation,
            name=name,
            schema=schema or shape,
        )
        try:
            return parse_reply(completion.text, shape)
        except JudgeParseError as exc:
            raise self._invalid(exc, completion, messages, consultation) from None

    def _invalid(
        self,
        problem: JudgeParseError,
        completion: Completion,
        messages: Sequence[Message],
        consultation: Consultation,
    ) -> JudgeError:
        """`judge_invalid_response`, logged (throttled): what was wrong, and a short excerpt of
        the reply, without secrets or text of the prompt (the first request's, not the repair's,
        which quotes the problem)."""
        error = invalid_reply(problem, completion.text, messages, consultation.usage())
        model = consultation.model
        throttled.warning(
            f"judge_invalid_response:{model}",
            "otel_scorers: judge %s gave an unusable reply: %s",
            model,
            error.message,
        )
        return error

    # ---- one call -------------------------------------------------------------------------

    def check_budget(self) -> None:
        """`JudgeError("budget")` when the hourly budget (cost or calls) is spent: checked before
        any call."""
        if self.budget is not None and self.budget.exhausted():
            self._budget_spent()
        if self.call_budget is not None and self.call_budget.exhausted(whole=True):
            self._calls_spent()

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

    def _calls_spent(self) -> None:
        assert self.call_budget is not None
        throttled.warning(
            "judge_calls",
            "otel_scorers: the judge's max_calls_per_hour (%d) is reached; skipping judge scores",
            int(self.call_budget.usd_per_hour),
        )
        raise JudgeError(
            "budget",
            f"the judge's max_calls_per_hour ({int(self.call_budget.usd_per_hour)}) is reached; "
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

    async def complete(
        self,
        messages: Sequence[Message],
        consultation: Consultation,
        *,
        name: str = "reply",
        schema: Any = None,
    ) -> Completion:
        """One judge call, retried on timeouts, 429 and 5xx while the deadline allows. Each
        attempt reserves its expected cost from the hourly budget before it is sent; while the
        breaker is open (the judge refused connections again and again) it fails at once."""
        model = consultation.model
        if not provider.litellm_loaded():  # the first import takes seconds; not the judge's slowness
            started = time.monotonic()
            await provider.load_litellm()
            consultation.deadline += time.monotonic() - started
        litellm = await provider.load_litellm()
        api_key = self._api_key(litellm, model, consultation)
        deadline = consultation.deadline
        attempt = 0
        while True:
            pause = self._resume_at - time.monotonic()
            if pause > 0:  # the provider asked every caller to hold off (429 with Retry-After)
                if time.monotonic() + pause >= deadline:
                    raise JudgeError(
                        "rate_limited",
                        f"judge {model} asked to wait {pause:.1f}s (Retry-After), past this score's deadline",
                        consultation.usage(),
                    )
                await asyncio.sleep(pause)
            failure: Exception | None = None
            async with self._semaphore():
                # waiting for a slot counts against the deadline; the call gets what is left
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise JudgeError("timeout", self._no_reply(attempt), consultation.usage())
                self._check_breaker(model, consultation)
                if self.config.attempt_timeout_s is not None:
                    remaining = min(remaining, self.config.attempt_timeout_s)
                request = judge_request(self.config, litellm, model, messages, schema, name, api_key=api_key)
                reserved = await self._reserve(litellm, model, name, request, consultation)
                try:
                    response = await asyncio.wait_for(litellm.acompletion(**request), remaining)
                except BaseException as exc:
                    self._settle(reserved, None)
                    if not isinstance(exc, Exception):
                        raise  # cancelled: the reservation is given back all the same
                    failure = exc
                    self.breaker.failed(exc)
            if failure is not None:
                kind, retryable, retry_after = classify(failure)
                if kind == "rate_limited" and retry_after is not None:
                    # honoured by every binding sharing this judge, not only by this call
                    self._resume_at = max(self._resume_at, time.monotonic() + retry_after)
                wait = retry_after if retry_after is not None else backoff_s(attempt)
                if not retryable or attempt >= self.config.max_retries or time.monotonic() + wait >= deadline:
                    raise self._failed(failure, kind, model, attempt, consultation, messages)
                attempt += 1
                await asyncio.sleep(wait)  # outside the slot: a backing-off call does not hold one
                continue
            self.breaker.succeeded()
            completion = completion_of(litellm, model, response, self.config.prices)
            consultation.add(messages, completion)
            self._learn_output(model, name, completion.output_tokens)
            self._settle(reserved, completion.cost_usd)
            return completion

    def _check_breaker(self, model: str, consultation: Consultation) -> None:
        wait = self.breaker.wait()
        if wait <= 0:
            return
        throttled.warning(
            f"judge_breaker:{model}",
            "otel_scorers: judge %s refused %d connections in a row; judge calls fail at once "
            "until one gets through (%d shed so far)",
            model,
            THRESHOLD,
            self.breaker.shed,
        )
        raise JudgeError(
            "judge_unavailable",
            f"judge {model} refused {THRESHOLD} connections in a row; calls fail at once until a "
            f"probe in {wait:.1f}s gets through",
            consultation.usage(),
            cause="circuit breaker open",
        )

    async def _reserve(
        self, litellm: Any, model: str, name: str, request: Mapping[str, Any], consultation: Consultation
    ) -> float:
        """Reserve this call's expected cost (its prompt's tokens, and as many output tokens as
        replies to this question have had on average) and one call, before it is sent;
        `JudgeError("budget")` when the hourly caps leave nothing for it, or when the call alone
        would cost more than the whole budget. While calls in flight hold reservations that may
        prove larger than their cost, it waits for them (within the deadline) instead."""
        if self.budget is not None:
            expected = self._expected_cost(litellm, model, name, request["messages"], request["max_tokens"])
            if expected > self.budget.usd_per_hour:
                raise JudgeError(
                    "budget",
                    f"this call's expected cost (${expected:.4g}) is more than the whole hourly budget "
                    f"(${self.budget.usd_per_hour:g}); raise cost_budget_usd_per_hour or lower max_prompt_tokens",
                    consultation.usage(),
                )
            while not self.budget.reserve(expected):
                if not self.budget.could_fit_later() or time.monotonic() >= consultation.deadline:
                    self._raise_with_usage(self._budget_spent, consultation)
                await asyncio.sleep(_RESERVE_POLL_S)
        else:
            expected = 0.0
        if self.call_budget is not None and not self.call_budget.reserve(1.0, whole=True):
            self._settle(expected, None)
            self._raise_with_usage(self._calls_spent, consultation)
        return expected

    def _settle(self, reserved: float, cost: float | None) -> None:
        if self.budget is not None:
            self.budget.settle(reserved, cost)
        if self.call_budget is not None:
            self.call_budget.settle(1.0, 1.0)  # a call sent is spent, whatever came of it

    @staticmethod
    def _raise_with_usage(spent: Callable[[], None], consultation: Consultation) -> None:
        try:
            spent()
        except JudgeError as exc:
            exc.usage = consultation.usage()
            raise

    def _expected_cost(
        self, litellm: Any, model: str, name: str, messages: Sequence[Message], output_bound: int
    ) -> float:
        try:
            prompt_tokens = int(litellm.token_counter(model=model, messages=[dict(m) for m in messages]))
        except Exception:
            prompt_tokens = sum(len(str(message.get("content", ""))) for message in messages) // 3
        total, count = self._output_tokens.get((model, name), (0, 0))
        output_tokens = round(total / count) if count else min(_EXPECTED_OUTPUT_TOKENS, output_bound)
        return judge_cost(litellm, model, prompt_tokens, output_tokens, self.config.prices) or 0.0

    def _learn_output(self, model: str, name: str, output_tokens: int) -> None:
        with self._lock:
            total, count = self._output_tokens.get((model, name), (0, 0))
            if count >= 64:  # a running mean that follows a model whose replies change
                total, count = total * 63 // 64, 63
            self._output_tokens[(model, name)] = (total + output_tokens, count + 1)

    def _failed(
        self,
        failure: Exception,
        kind: str,
        model: str,
        attempt: int,
        consultation: Consultation,
        messages: Sequence[Message],
    ) -> JudgeError:
        """The error for a call that will not be retried, logged (throttled) with its cause (without
        secrets, and without the prompt a provider's error may echo)."""
        cause = describe_cause(failure, self._secrets(), messages)
        at = f" at {self.config.api_base}" if self.config.api_base else ""  # which server refused, say
        throttled.warning(
            f"judge:{kind}:{model}", "otel_scorers: judge %s%s failed: %s (%s)", model, at, kind, cause
        )
        after = f" after {attempt} retr{'y' if attempt == 1 else 'ies'}" if attempt else ""
        if kind == "timeout" and not str(failure).strip():
            message = f"{self._no_reply(attempt)} ({cause})"
        else:
            message = f"judge {model}{at}{after}: {cause}"
        return JudgeError(kind, message, consultation.usage(), cause=cause)

    def _secrets(self) -> tuple[str | None, ...]:
        return (self.config.api_key, os.environ.get("OTEL_SCORERS_JUDGE_API_KEY"))

    def _no_reply(self, attempts: int) -> str:
        tries = f" ({attempts + 1} attempts)" if attempts else ""
        return (
            f"no judge reply within the judge's timeout_s={self.config.timeout_s:g}s{tries}; slow model, "
            f"or more scores than concurrency={self.config.concurrency} can serve"
        )

    def _api_key(self, litellm: Any, model: str, consultation: Consultation) -> str | None:
        """The key to send: the configured one; none when the provider's variable is set (litellm
        reads it); a placeholder for a server at `api_base` that needs none (the OpenAI client
        refuses to send without one). A hosted provider whose key is missing is `judge_auth` at
        once, with no call and no retry."""
        if self.config.api_key:
            return self.config.api_key
        missing = self._missing_keys.get(model)
        if missing is None:
            try:
                found = litellm.validate_environment(model=model, api_base=self.config.api_base)
                named = found.get("missing_keys") or ()
            except Exception:
                named = ()
            # only credentials: litellm also lists a provider's base URL, which has a default
            missing = tuple(str(key) for key in named if "BASE" not in str(key))
            self._missing_keys[model] = missing
        if not missing:
            return None
        if self.config.api_base:
            return "no-key"
        raise JudgeError(
            "judge_auth",
            f"judge {model} needs {' or '.join(missing)} in the environment, or judge.api_key in the "
            "config; no call was made",
            consultation.usage(),
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
