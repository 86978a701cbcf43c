"""A scorer binding: one scorer with its name, filter, sampling rate, threshold and limits.

`admit(run)` decides whether the binding looks at a run (filter, then trace-id sampling, then
the rate limit); a judge binding with a budget (`paced_sampling`) decides by the run's risk and
the budget's pace instead of a fixed rate, through `paced_sampling.Decided`, the pacing
decision's one home; `evaluate(run)` turns whatever the scorer returns, raises or fails to
return in time into a `Score`. Never an exception: a failing scorer is an error result.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Literal, TypeVar, cast

from otel_scorers.errors import ConfigError
from otel_scorers.filters import Predicate, parse_filter
from otel_scorers.model import AgentRun, Score, ScoreError, higher_is_worse, passes
from otel_scorers.runs.context import ContextOverride, context_override
from otel_scorers.scorers.checks import Check
from otel_scorers.scorers.evaluator_version import evaluator_version
from otel_scorers.scorers.judge import provider
from otel_scorers.scorers.judge.config import unpriced_budget_problem
from otel_scorers.scorers.judge.errors import JudgeError, redact
from otel_scorers.scorers.protocol import Lane, Scorer, ScoreResult, UsesJudge, as_scorer, lane_of
from otel_scorers.selection.paced_sampling import (
    Decided,
    PacedSampler,
    PacingPolicy,
    parse_sampling,
)
from otel_scorers.selection.sampling import DEFAULT_RATE, RateLimiter, TraceIdSampler

T = TypeVar("T")
S = TypeVar("S")
Admission = Literal["admitted", "filtered", "sampled_out", "rate_limited"]
DEFAULT_TIMEOUT_S = 30.0
_MISSING_REASON = {
    "output": "the trace did not carry the run's output (content capture off or unreadable)",
    "input": "the trace did not carry the run's input (content capture off or unreadable)",
    "tool_errors": "the trace did not say whether the run's tool calls failed (content capture off)",
    "tool_calls": "the trace did not carry the run's tool calls (content capture off)",
    "tool_arguments": "the trace did not carry the run's tool arguments (content capture off)",
    "tool_results": "the trace did not carry the run's tool results (content capture off)",
}
#: For a field the run's instrumentation never writes (`AgentRun.unrecorded`).
_UNRECORDED_REASON = "the run's instrumentation does not record its {field} (whatever the capture settings)"


@dataclass(frozen=True, slots=True)
class Binding:
    scorer: Scorer
    name: str
    sampler: TraceIdSampler = field(default_factory=TraceIdSampler)
    filter: Predicate | None = None
    threshold: float | None = None
    max_per_minute: int | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    limiter: RateLimiter | None = field(default=None, repr=False, compare=False)
    #: Replaces the run's own context for this binding's scorer (`bind(context=...)`).
    context: ContextOverride | None = field(default=None, repr=False, compare=False)
    #: Where the engine runs the scorer (`Lane`): declared by the scorer, or `bind(uses_judge=...)`.
    lane: Lane = "async"
    #: Budget-paced, risk-weighted sampling instead of the fixed rate (`sampler` then keeps all).
    paced: PacedSampler | None = field(default=None, repr=False, compare=False)
    #: What made this binding's results (`scorers.evaluator_version`), on every score it gives.
    evaluator_version: str | None = None

    @property
    def sampling_rate(self) -> float:
        return self.sampler.rate

    @property
    def uses_judge(self) -> bool:
        """Scored in the engine's judge lane (bounded, apart from the quick checks)."""
        return self.lane == "judge"

    def admit(self, run: AgentRun, checks: Sequence[Score] = ()) -> Admission:
        """Whether the binding scores `run`. A paced binding's decision counts the run in its
        demand and sets nothing aside: the engine admits through `Decided`, which settles it."""
        if self.paced is None:  # every quick check of every run comes here: one call each
            return self.screened(run) or self.limited()
        decided: Decided[Binding] = Decided()
        admission = decided.admit(self, run, checks)
        decided.release()
        return cast(Admission, admission)

    def screened(self, run: AgentRun) -> Admission | None:
        """`filtered` or `sampled_out` when the filter or the trace-id rate turns `run` away."""
        if self.filter is not None:
            try:
                if not self.filter(run):
                    return "filtered"
            except Exception:  # a user's callable filter: a failure filters the run out
                return "filtered"
        if not self.sampler.sampled(run.trace_id):
            return "sampled_out"
        return None

    def limited(self) -> Admission:
        """`rate_limited` when `max_per_minute` has no room, else `admitted` (the room taken)."""
        if self.limiter is not None and not self.limiter.try_acquire():
            return "rate_limited"
        return "admitted"

    def evaluate(self, run: AgentRun) -> Score | Awaitable[Score]:
        """The score, directly for synchronous scorers, as an awaitable for asynchronous ones."""
        missing = run.missing and self.scorer.needs & run.missing
        if missing:
            field_name = sorted(missing)[0]
            if field_name in run.unrecorded:
                reason = _UNRECORDED_REASON.format(field=field_name.replace("_", " "))
            elif field_name in run.text_sources:  # the span held a structure, not text
                reason = f"the run's {field_name} could not be found: {run.text_sources[field_name]}"
            else:
                reason = _MISSING_REASON.get(field_name, f"the trace did not carry the run's {field_name}")
            return Score(self.name, skipped=reason, evaluator_version=self.evaluator_version)
        if self.context is not None:
            given = self.context(run)
            if given is not None:
                run = replace(run, context=given)
        return self.call(self.scorer.score, run)

    def call(self, score: Callable[[S], Any], subject: S) -> Score | Awaitable[Score]:
        """`score(subject)` as this binding's `Score`: timed, labelled, within its timeout, an
        error score for whatever it raises or returns wrong. The one implementation, for runs
        (`evaluate`) and for conversations (`ConversationBinding`)."""
        start_ns = time.time_ns()
        started = time.perf_counter()
        try:
            result = score(subject)
        except TimeoutError as exc:  # a check that gave up in time (a regular expression)
            error = ScoreError(
                "timeout", redact(str(exc)) or f"scorer did not finish within {self.timeout_s:g}s"
            )
            return Score(
                self.name,
                error=error,
                duration_s=time.perf_counter() - started,
                start_ns=start_ns,
                evaluator_version=self.evaluator_version,
                sampling_probability=self._fixed_probability,
            )
        except Exception as exc:
            return self.error(exc, time.perf_counter() - started, start_ns)
        # A check's `Score` first: `isawaitable` walks ABCs, and most results are scores.
        if type(result) is not Score and type(result) is not float and inspect.isawaitable(result):
            return self._finish(Unawaited(result), started, start_ns)
        return self.to_score(result, time.perf_counter() - started, start_ns)

    async def _finish(self, unawaited: Unawaited[ScoreResult], started: float, start_ns: int) -> Score:
        pending = unawaited.take()
        if self.lane == "judge":
            not_loaded = await judge_client_loaded(self.name, pending, start_ns)
            if not_loaded is not None:
                return not_loaded
            started = time.perf_counter()  # the score's deadline starts once the client is there
        result, failed = await within_timeout(pending, self.timeout_s, self.name, started, start_ns)
        if failed is not None:  # an error stands for the runs not sampled as any score does
            return replace(
                failed, evaluator_version=self.evaluator_version, sampling_probability=self._fixed_probability
            )
        return self.to_score(result, time.perf_counter() - started, start_ns)

    def error(self, exc: BaseException, duration_s: float, start_ns: int = 0) -> Score:
        failed = error_score(self.name, exc, duration_s, start_ns, self._fixed_probability)
        failed.evaluator_version = self.evaluator_version
        return failed

    def to_score(self, result: Any, duration_s: float, start_ns: int = 0) -> Score:
        if isinstance(result, Score):
            if result.value is None and result.error is None and result.skipped is None:
                return self._invalid_value("Score has no value", start_ns)
            label = result.label or (self.label(result.value) if result.value is not None else None)
            if type(result) is not Score:
                return self._own_subclass(result, label, duration_s, start_ns)
            # As `replace` does, without its per-call walk over the fields (twice per check and run).
            return Score(
                self.name,
                result.value,
                label,
                result.reason,
                result.details,
                result.error,
                result.skipped,
                result.duration_s or duration_s,
                result.usage,
                result.start_ns or start_ns,
                self._fixed_probability,
                self.evaluator_version,
            )
        if isinstance(result, bool):
            value = 1.0 if result else 0.0
        elif isinstance(result, (int, float)) and math.isfinite(result):
            value = float(result)
        else:
            return self._invalid_value(
                f"scorer returned {result!r}; expected a number, bool or Score", start_ns, duration_s
            )
        # A bool is a verdict: pass/fail like a check's, whatever the scorer declared.
        label = ("pass" if result else "fail") if isinstance(result, bool) else self.label(value)
        return Score(
            self.name,
            value=value,
            label=label,
            duration_s=duration_s,
            start_ns=start_ns,
            sampling_probability=self._fixed_probability,
            evaluator_version=self.evaluator_version,
        )

    def _own_subclass(self, result: Score, label: str | None, duration_s: float, start_ns: int) -> Score:
        """A subclass of `Score` made this binding's: it keeps its type and its own fields."""
        return replace(
            result,
            scorer=self.name,
            label=label,
            duration_s=result.duration_s or duration_s,
            start_ns=result.start_ns or start_ns,
            sampling_probability=self._fixed_probability,
            evaluator_version=self.evaluator_version,
        )

    def _invalid_value(self, message: str, start_ns: int, duration_s: float = 0.0) -> Score:
        """The error score of a scorer whose result is not a verdict."""
        return Score(
            self.name,
            error=ScoreError("invalid_value", message),
            duration_s=duration_s,
            start_ns=start_ns,
            evaluator_version=self.evaluator_version,
            sampling_probability=self._fixed_probability,
        )

    @property
    def _fixed_probability(self) -> float | None:
        """A fixed rate below 1, the probability of every score of this binding (a paced
        binding's scores get theirs per run)."""
        rate = self.sampler.rate
        return rate if rate < 1.0 and self.paced is None else None

    def label(self, value: float) -> str | None:
        if self.threshold is not None:
            return "pass" if passes(value, self.threshold, higher_is_worse(self.scorer)) else "fail"
        if self.scorer.binary:
            return "pass" if value >= 1.0 else "fail"
        return None


def bind(
    scorer: Scorer | Callable[[AgentRun], Any],
    *,
    name: str | None = None,
    sampling: float | Mapping[str, Any] | PacingPolicy = DEFAULT_RATE,
    filter: Predicate | Mapping[str, Any] | None = None,
    threshold: float | None = None,
    max_per_minute: int | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    context: Sequence[str] | str | None = None,
    uses_judge: bool | None = None,
) -> Binding:
    """Attach a name, sampling rate, filter, threshold and limits to a scorer.

    `sampling` is a rate in [0, 1] (or `{"rate": r}` as in the config file), or, for a judge
    scorer, a budget: `{"usd_per_hour": 2}` or `{"calls_per_hour": 600}`, with optional risk
    `weights` and `feedback_attribute` (see `otel_scorers.selection.paced_sampling`); `filter` a
    predicate description (see `otel_scorers.filters`) or a function of `AgentRun`.
    `context` replaces the run's own context (`AgentRun.context`) for this scorer: a list of
    texts, or a path into the run (`attributes.<key>`: a string or a list of strings).
    The scorer's lane is the one it declares (the LLM scorers: `judge`); `uses_judge=True` puts
    a custom scorer that calls `ask_judge` itself in the judge lane.
    """
    the_scorer = as_scorer(scorer)
    lane = _lane(the_scorer, uses_judge)
    rate, paced = _sampling(the_scorer, sampling, lane == "judge")
    sampler = TraceIdSampler(rate)
    limiter = _limits(timeout_s, threshold, max_per_minute)
    if isinstance(the_scorer, Check):  # a check whose cost depends on its input keeps to the timeout
        the_scorer = the_scorer.within(timeout_s)
    return Binding(
        scorer=the_scorer,
        name=name or the_scorer.name,
        sampler=sampler,
        filter=parse_filter(filter) if filter is not None else None,
        threshold=threshold,
        max_per_minute=max_per_minute,
        timeout_s=timeout_s,
        limiter=limiter,
        context=context_override(context) if context is not None else None,
        lane=lane,
        paced=paced,
        evaluator_version=evaluator_version(the_scorer),
    )


def _lane(scorer: Scorer, uses_judge: bool | None) -> Lane:
    """The scorer's own lane, unless `uses_judge` moves it into the judge lane or out of it."""
    lane = lane_of(scorer)
    if uses_judge is not None:
        lane = "judge" if uses_judge else ("async" if lane == "judge" else lane)
    return lane


def _sampling(
    scorer: Scorer, sampling: float | Mapping[str, Any] | PacingPolicy, judged: bool
) -> tuple[float, PacedSampler | None]:
    """The trace-id sampling rate, and the pacer when the sampling is a budget (judge scorers
    only, and in dollars only for a model with a price)."""
    policy = parse_sampling(sampling)
    if not isinstance(policy, PacingPolicy):
        return policy, None
    if not judged:
        raise ConfigError(
            f"sampling.{policy.budget_key}",
            "a budget paces judge scorers only; a quick check costs nothing: give it a rate",
        )
    problem = unpriced_pacing(scorer, policy)
    if problem is not None:
        raise ConfigError("sampling.usd_per_hour", problem)
    return 1.0, PacedSampler(policy)  # every trace is kept until its run is decided


def _limits(timeout_s: float, threshold: float | None, max_per_minute: int | None) -> RateLimiter | None:
    """Check the binding's timeout and threshold; the rate limiter of `max_per_minute`, if any."""
    if not 0 < timeout_s < math.inf:
        raise ConfigError("timeout_s", f"must be a positive, finite number of seconds, got {timeout_s}")
    if threshold is not None and not math.isfinite(threshold):
        raise ConfigError("threshold", f"must be a finite number, got {threshold}")
    try:
        return RateLimiter(max_per_minute) if max_per_minute is not None else None
    except ValueError as exc:
        raise ConfigError("max_per_minute", str(exc)) from None


def unpriced_pacing(scorer: Scorer, policy: PacingPolicy, section: str = "judge.") -> str | None:
    """Why a budget in dollars cannot pace `scorer`, or None: the rule of the judge's own cost cap
    (`unpriced_budget_problem`), since a spend nobody prices cannot be counted."""
    if policy.unit != "usd" or not isinstance(scorer, UsesJudge):
        return None
    return unpriced_budget_problem(scorer.model, scorer.judge.config.prices, section)


def as_binding(item: Binding | Scorer | Callable[[AgentRun], Any]) -> Binding:
    return item if isinstance(item, Binding) else bind(item)


def error_score(
    name: str,
    exc: BaseException,
    duration_s: float,
    start_ns: int = 0,
    sampling_probability: float | None = None,
) -> Score:
    """A scorer's exception as an error score; its message may quote a key (a custom scorer that
    called a provider itself), so it is redacted as the judge's errors are."""
    return Score(
        name,
        error=ScoreError(type(exc).__name__, redact(str(exc))[:1000]),
        duration_s=duration_s,
        start_ns=start_ns,
        sampling_probability=sampling_probability,
    )


#: How long a judged score waits for the judge's client to load (litellm's first import: seconds,
#: tens of them on a loaded machine) before its own deadline starts; a stuck import still ends, in
#: an error that names it.
JUDGE_CLIENT_LOAD_S = 120.0


class Unawaited(Generic[T]):
    """A scorer's awaitable on its way to the coroutine that awaits it (`Binding._finish`). If
    that coroutine never starts (a shutdown cancels the scores still waiting, some before their
    task has run), this closes it when dropped: a score that will not be made is not reported as
    a coroutine never awaited."""

    __slots__ = ("_awaitable",)

    def __init__(self, awaitable: Awaitable[T]) -> None:
        self._awaitable: Awaitable[T] | None = awaitable

    def take(self) -> Awaitable[T]:
        awaitable, self._awaitable = self._awaitable, None
        assert awaitable is not None, "taken once"
        return awaitable

    def __del__(self) -> None:
        if inspect.iscoroutine(self._awaitable):
            self._awaitable.close()


async def judge_client_loaded(name: str, pending: Awaitable[Any], start_ns: int) -> Score | None:
    """Wait for the judge's client, off the loop (the first time only; then it is there): None
    once it is loaded, else the error score of `name`, `pending` closed unawaited and unwarned."""
    if provider.litellm_loaded() or not provider.litellm_installed():  # nothing to load, or can't
        return None
    started = time.perf_counter()
    error: ScoreError | None = None
    try:
        await asyncio.wait_for(provider.load_litellm(), JUDGE_CLIENT_LOAD_S)
    except asyncio.TimeoutError:
        error = ScoreError(
            "timeout",
            f"the judge's client (litellm) did not load within {JUDGE_CLIENT_LOAD_S:g}s, its first import; "
            "no request was sent",
        )
    except JudgeError as exc:  # its import failed
        error = ScoreError(exc.type, exc.message)
    except Exception as exc:  # an import that raises: an error score, never an exception upward
        error = ScoreError(
            "judge_unavailable", f"the judge's client (litellm) failed to load: {redact(str(exc))}"
        )
    if error is None:
        return None
    if inspect.iscoroutine(pending):
        pending.close()
    return Score(name, error=error, duration_s=time.perf_counter() - started, start_ns=start_ns)


async def within_timeout(
    pending: Awaitable[T], timeout_s: float, name: str, started: float, start_ns: int
) -> tuple[T | None, Score | None]:
    """`pending`'s result within `timeout_s`, or (None, the error score of `name`) when it timed
    out or raised."""
    try:
        return await asyncio.wait_for(pending, timeout_s), None
    except asyncio.TimeoutError:
        timed_out = ScoreError("timeout", f"scorer did not finish within {timeout_s:g}s")
        return None, Score(name, error=timed_out, duration_s=time.perf_counter() - started, start_ns=start_ns)
    except Exception as exc:
        return None, error_score(name, exc, time.perf_counter() - started, start_ns)
