"""One judge call to the provider through litellm: the request, its retries and the breaker.

`complete()` sends one request, retried on timeouts, 429 (honouring Retry-After, for every caller
of the judge) and 5xx with backoff and jitter while the score's deadline allows. Each attempt
takes one of the judge's `concurrency` slots, reserves its cost from the judge's `Spend` before
it is sent, and fails at once while the connection breaker is open. The reply is read through
the judge's own transport (`transport`): bounded in bytes, and never from another host.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any

from otel_scorers.scorers.judge import provider
from otel_scorers.scorers.judge.activity import JudgeActivity
from otel_scorers.scorers.judge.breaker import THRESHOLD, Breaker
from otel_scorers.scorers.judge.config import JudgeConfig
from otel_scorers.scorers.judge.errors import JudgeError, describe_cause, refusal_in
from otel_scorers.scorers.judge.request import judge_request
from otel_scorers.scorers.judge.retry import backoff_s, classify
from otel_scorers.scorers.judge.spend import Spend
from otel_scorers.scorers.judge.usage import Completion, Consultation, Message, completion_of
from otel_scorers.throttled_log import throttled


class ProviderCall:
    """Makes the judge's calls to its provider. Safe to share across threads and event loops;
    nothing here imports litellm (nor its HTTP client) until the first call."""

    def __init__(self, config: JudgeConfig, spend: Spend) -> None:
        self.config = config
        self.spend = spend
        self.breaker = Breaker()
        #: Calls queued and in flight, and each finished call, for the pipeline's instruments.
        self.activity = JudgeActivity()
        self._lock = threading.Lock()
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        self._missing_keys: dict[str, tuple[str, ...]] = {}  # per model: the credentials it lacks
        self._resume_at = 0.0  # time.monotonic() before which no call goes out (Retry-After)
        self._transport: Any = None  # `transport.judge_transport`, imported with the first call

    def renew_after_fork(self) -> None:
        """A forked child must not inherit a lock held at fork time, nor the semaphores of the
        parent's loops."""
        self._lock = threading.Lock()
        self._semaphores = weakref.WeakKeyDictionary()
        self.breaker.renew_after_fork()
        self.activity.renew_after_fork()

    async def complete(
        self,
        messages: Sequence[Message],
        consultation: Consultation,
        *,
        name: str = "reply",
        schema: Any = None,
    ) -> Completion:
        """One judge call, retried on timeouts, 429 and 5xx while the deadline allows."""
        litellm = await self._load(consultation)
        model = consultation.model
        api_key = self._api_key(litellm, model, consultation)
        attempt = 0
        while True:
            await self._hold_off(consultation)
            request = judge_request(self.config, litellm, model, messages, schema, name, api_key=api_key)
            completion, failure = await self._attempt(litellm, request, consultation, attempt)
            if completion is not None:
                consultation.add(messages, completion)
                return completion
            assert failure is not None
            kind, retryable, retry_after = classify(failure)
            if kind == "rate_limited" and retry_after is not None:
                # honoured by every binding sharing this judge, not only by this call
                self._resume_at = max(self._resume_at, time.monotonic() + retry_after)
            wait = retry_after if retry_after is not None else backoff_s(attempt)
            deadline = consultation.deadline
            if not retryable or attempt >= self.config.max_retries or time.monotonic() + wait >= deadline:
                raise self._failed(failure, kind, attempt, consultation, messages)
            attempt += 1
            await asyncio.sleep(wait)  # outside the slot: a backing-off call does not hold one

    async def _load(self, consultation: Consultation) -> Any:
        """litellm, and the judge's transport; the first import takes seconds, which are not the
        judge's slowness, so the deadline moves by as much."""
        if not provider.litellm_loaded():
            started = time.monotonic()
            await provider.load_litellm()
            consultation.deadline += time.monotonic() - started
        litellm = await provider.load_litellm()
        if self._transport is None:
            from otel_scorers.scorers.judge.transport import judge_transport  # aiohttp: with litellm

            self._transport = judge_transport
        return litellm

    async def _hold_off(self, consultation: Consultation) -> None:
        """Wait while the provider asked every caller to hold off (429 with Retry-After)."""
        pause = self._resume_at - time.monotonic()
        if pause <= 0:
            return
        if time.monotonic() + pause >= consultation.deadline:
            raise JudgeError(
                "rate_limited",
                f"judge {consultation.model} asked to wait {pause:.1f}s (Retry-After), past this score's deadline",
                consultation.usage(),
            )
        await asyncio.sleep(pause)

    async def _attempt(
        self, litellm: Any, request: dict[str, Any], consultation: Consultation, attempt: int
    ) -> tuple[Completion | None, Exception | None]:
        """One attempt in one of the judge's slots: (its completion, None) or (None, its failure).
        Waiting for a slot counts against the deadline; the call gets what is left. Counted as
        queued while it waits for the slot, in flight while it holds one (`activity`)."""
        activity = self.activity
        activity.add_queued(1)
        waiting = True
        try:
            async with self._semaphore():
                activity.add_queued(-1)
                waiting = False
                activity.add_in_flight(1)
                try:
                    return await self._in_slot(litellm, request, consultation, attempt)
                finally:
                    activity.add_in_flight(-1)
        finally:
            if waiting:  # cancelled, or the deadline passed, before a slot came free
                activity.add_queued(-1)

    async def _in_slot(
        self, litellm: Any, request: dict[str, Any], consultation: Consultation, attempt: int
    ) -> tuple[Completion | None, Exception | None]:
        remaining = consultation.deadline - time.monotonic()
        if remaining <= 0:
            raise JudgeError("timeout", self._no_reply(attempt), consultation.usage())
        self._check_breaker(consultation)
        if self.config.attempt_timeout_s is not None:
            remaining = min(remaining, self.config.attempt_timeout_s)
        reserved = await self.spend.reserve(litellm, consultation.model, request, consultation)
        bounded = self._transport.bounded(request["max_tokens"])
        started = time.monotonic()
        try:
            call = litellm.acompletion(**request, shared_session=self._transport.session())
            response = await asyncio.wait_for(call, remaining)
        except BaseException as exc:
            self.spend.settle(reserved, None)
            if not isinstance(exc, Exception):
                self.activity.finished(consultation.model, "cancelled", time.monotonic() - started)
                raise  # cancelled: the reservation is given back all the same
            self.activity.finished(consultation.model, classify(exc)[0], time.monotonic() - started)
            self.breaker.failed(exc)
            return None, exc
        finally:
            self._transport.unbounded(bounded)
        self.activity.finished(consultation.model, "ok", time.monotonic() - started)
        self.breaker.succeeded()
        completion = completion_of(litellm, consultation.model, response, self.config.prices)
        self.spend.settle(reserved, completion.cost_usd if completion.counted else reserved)
        return completion, None

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        with self._lock:
            semaphore = self._semaphores.get(loop)
            if semaphore is None:
                semaphore = self._semaphores[loop] = asyncio.Semaphore(self.config.concurrency)
            return semaphore

    def _check_breaker(self, consultation: Consultation) -> None:
        wait = self.breaker.wait()
        if wait <= 0:
            return
        model = consultation.model
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

    def _failed(
        self,
        failure: Exception,
        kind: str,
        attempt: int,
        consultation: Consultation,
        messages: Sequence[Message],
    ) -> JudgeError:
        """The error for a call that will not be retried, logged (throttled) with its cause (without
        secrets, and without the prompt a provider's error may echo)."""
        model = consultation.model
        refused = refusal_in(failure)
        cause = refused.message if refused is not None else describe_cause(failure, self._secrets(), messages)
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
