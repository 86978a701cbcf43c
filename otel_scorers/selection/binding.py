"""A scorer binding: one scorer with its name, filter, sampling rate, threshold and limits.

`admit(run)` decides whether the binding looks at a run (filter, then trace-id sampling, then
the rate limit); a judge binding with a budget (`paced_sampling`) decides by the run's risk and
the budget's pace instead of a fixed rate, through `paced_sampling.Decided`, the pacing
decision's one home. Calling the scorer on a run it admits (timeout, error score, label) is
`pipeline/scorer_call.py`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from otel_scorers.errors import ConfigError
from otel_scorers.model import AgentRun, Score
from otel_scorers.runs.context import ContextOverride, context_override
from otel_scorers.scorers.checks import Check
from otel_scorers.scorers.evaluator_version import evaluator_version
from otel_scorers.scorers.judge.config import unpriced_budget_problem
from otel_scorers.scorers.offloaded_check import OffloadedCheck
from otel_scorers.scorers.protocol import Lane, Scorer, UsesJudge, as_scorer, lane_of
from otel_scorers.selection.filters import Predicate, parse_filter
from otel_scorers.selection.paced_sampling import (
    Decided,
    PacedSampler,
    PacingPolicy,
    parse_sampling,
)
from otel_scorers.selection.sampling import DEFAULT_RATE, RateLimiter, TraceIdSampler

Admission = Literal["admitted", "filtered", "sampled_out", "rate_limited"]
DEFAULT_TIMEOUT_S = 30.0


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
    #: Whether `admit` may turn a run away (a filter, a rate below 1, a rate limit, pacing);
    #: without any, every run is admitted, and the engine asks nothing (set from the others).
    screens: bool = field(init=False, repr=False, compare=False)
    #: A fixed rate below 1, the probability of every score of this binding (a paced binding's
    #: scores get theirs per run); set from the others, read for every score.
    fixed_probability: float | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rate = self.sampler.rate
        screens = self.filter is not None or rate < 1.0 or self.limiter is not None or self.paced is not None
        object.__setattr__(self, "screens", screens)
        object.__setattr__(self, "fixed_probability", rate if rate < 1.0 and self.paced is None else None)

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
    predicate description (see `otel_scorers.selection.filters`) or a function of `AgentRun`.
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
    if isinstance(the_scorer, (Check, OffloadedCheck)):  # a check whose cost grows keeps to the timeout
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
    return trace_rate(policy), PacedSampler(policy)


def trace_rate(sampling: float | PacingPolicy) -> float:
    """The trace-id rate of a binding with this sampling: a budget keeps every trace until its
    run is decided (`paced_sampling.Decided`)."""
    return 1.0 if isinstance(sampling, PacingPolicy) else sampling


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


def unique_names(named: Iterable[tuple[str, str]]) -> list[ConfigError]:
    """An error for each scorer name given again, `(where, name)` pairs in order: at `where.name`,
    naming where it came first. Spans, metrics and labels tell scorers apart by name alone, run
    and conversation scorers alike: the one rule for every list of them."""
    first: dict[str, str] = {}
    errors: list[ConfigError] = []
    for where, name in named:
        if name in first:
            errors.append(
                ConfigError(
                    f"{where}.name",
                    f"duplicate scorer name {name!r} (also {first[name]}); give each scorer a unique name",
                )
            )
        first.setdefault(name, where)
    return errors


def as_binding(item: Binding | Scorer | Callable[[AgentRun], Any]) -> Binding:
    return item if isinstance(item, Binding) else bind(item)
