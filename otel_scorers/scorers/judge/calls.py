"""The `Judge`: asks the judge model through litellm, within one deadline, for every judge binding
that shares it. It composes the judge's named parts:

- `SingleFlight` (`single_flight`): the cache, and one call for identical questions asked at once;
- `Spend` (`spend`): the hourly caps, and the reservation each call makes before it is sent;
- `ProviderCall` (`provider_call`): one call to the provider, its retries and the breaker;
- `Batches` (`batch`): a run's questions in one call, when the config says so.

`consult()` is the one way a scorer's judge work runs: the budget check, single flight and the
cache, the deadline, usage, and a failure as a `JudgeError` that carries its usage and transcript
(`to_score` makes the error result). `ask_one()` is `consult()` for one question, batched with
the run's other questions when the config says so. Below them, `ask()` renders a question within
the prompt bound, reads one JSON object of the expected shape out of the reply, and asks once
more with the parse error when that fails.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

from otel_scorers.fork_safety import renew_in_child, renew_module_state_in_child
from otel_scorers.model import JudgeUsage
from otel_scorers.scorers.judge.activity import JudgeActivity
from otel_scorers.scorers.judge.batch import Batches
from otel_scorers.scorers.judge.breaker import Breaker
from otel_scorers.scorers.judge.budget import CostBudget
from otel_scorers.scorers.judge.cache import BoundedCache
from otel_scorers.scorers.judge.config import ENV_MODEL, JudgeConfig
from otel_scorers.scorers.judge.errors import JudgeError, invalid_reply
from otel_scorers.scorers.judge.prompt import Question, render
from otel_scorers.scorers.judge.prompt import repair as repair_messages
from otel_scorers.scorers.judge.provider_call import ProviderCall
from otel_scorers.scorers.judge.repair import JudgeParseError, parse_reply
from otel_scorers.scorers.judge.single_flight import SingleFlight
from otel_scorers.scorers.judge.spend import Spend
from otel_scorers.scorers.judge.usage import Completion, Consultation, JudgeReply, Message
from otel_scorers.throttled_log import throttled

T = TypeVar("T")


class Judge:
    """Calls the judge model for every judge binding that shares it. Safe to share across
    threads and event loops; nothing here imports litellm until the first call."""

    def __init__(self, config: JudgeConfig | None = None) -> None:
        self._config = config or JudgeConfig.from_env()
        self.flights = SingleFlight(BoundedCache(self._config.cache_size))
        self.spend = Spend(self._config)
        self.provider = ProviderCall(self._config, self.spend)
        self.batches = Batches(self)
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        """A forked child (gunicorn, uvicorn workers) must not inherit a lock another thread held
        at fork time, nor the state of the parent's loops."""
        self.flights.renew_after_fork()
        self.spend.renew_after_fork()
        self.provider.renew_after_fork()
        self.batches.renew_after_fork()

    @property
    def config(self) -> JudgeConfig:
        return self._config

    @config.setter
    def config(self, config: JudgeConfig) -> None:
        """A new config reaches every part (where the judge calls, how it asks); the caps and
        the cache it was built with stay."""
        self._config = self.spend.config = self.provider.config = config

    @property
    def cache(self) -> BoundedCache:
        return self.flights.cache

    @property
    def budget(self) -> CostBudget | None:
        """The hourly cost budget (None when there is none)."""
        return self.spend.budget

    @property
    def call_budget(self) -> CostBudget | None:
        """The hourly call cap (None when there is none)."""
        return self.spend.call_budget

    @property
    def breaker(self) -> Breaker:
        return self.provider.breaker

    @property
    def activity(self) -> JudgeActivity:
        """Calls queued and in flight, and each finished call (`judge/activity.py`)."""
        return self.provider.activity

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
            self.spend.check(model)
            return await work(consultation)

        try:
            value, cached = await self.flights.once(key, compute)
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

    def check_budget(self, model: str | None = None) -> None:
        """`JudgeError("budget")` when the hourly budget (cost or calls) is spent (`Spend.check`)."""
        self.spend.check(model)

    async def once(self, key: Hashable, compute: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """`SingleFlight.once`: the answer for `key`, computed at most once at a time."""
        return await self.flights.once(key, compute)

    async def complete(
        self,
        messages: Sequence[Message],
        consultation: Consultation,
        *,
        name: str = "reply",
        schema: Any = None,
    ) -> Completion:
        """`ProviderCall.complete`: one judge call, retried while the deadline allows."""
        return await self.provider.complete(messages, consultation, name=name, schema=schema)

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
