"""Budget-paced, risk-weighted sampling for a judge binding: which runs to judge, and with what
inclusion probability.

    sampling: {usd_per_hour: 2}                 # or {calls_per_hour: 600}
    sampling: {usd_per_hour: 2, weights: {failed_check: 30}, feedback_attribute: app.feedback}
    sampling: {usd_per_hour: 2, share_key: attributes.tenant.id, max_key_share: 0.25}

For each run (on the engine's thread, after the run's quick checks): its weight from the risk
signals (`risk.py`), its probability `min(1, base * weight)` from the pacing controller
(`pacing.py`), and the decision by OpenTelemetry's consistent rule on the trace id (its
rightmost 56 bits against the threshold for that probability, as `sampling.py` does for a fixed
rate): processes with the same base and weights decide the same for the same trace. The
probability goes on the judged score (`otel_scorers.sampling.probability`), so that estimates
can weight each result by its inverse. What one signal, or one tenant (`share_key`), can take of
the budget through its weights is capped (`risk_caps.py`).

`Decided` is the one home of the pacing decision, wherever a run is admitted (the pipeline's
judge lane, `score_run`, `Binding.admit`): it admits a run per binding, takes each paced
binding's decision, and settles every decision it took exactly once, with the binding's score
(its probability stamped on it, its cost given to the pacing) or without it (given back).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Literal, Protocol, TypeVar

from otel_scorers.errors import ConfigError
from otel_scorers.model import AgentRun, Score
from otel_scorers.runs.paths import path_getter
from otel_scorers.selection.pacing import MIN_PER_HOUR, PacingController
from otel_scorers.selection.risk import DEFAULT_FEEDBACK_ATTRIBUTE, RiskSignals, RiskWeights
from otel_scorers.selection.risk_caps import RiskCaps, ShareCaps
from otel_scorers.selection.sampling import DEFAULT_RATE, randomness, threshold_for
from otel_scorers.throttled_log import throttled

BudgetUnit = Literal["usd", "calls"]
_KEYS = ("rate", "usd_per_hour", "calls_per_hour", "weights", "feedback_attribute")
_CAP_KEYS = ("max_signal_share", "share_key", "max_key_share")


@dataclass(frozen=True, slots=True)
class PacingPolicy:
    """What a paced binding spends (`per_hour` dollars or calls) and how it weighs runs.
    `clock` (seconds, monotonic) is for simulations: a simulated hour need not take one."""

    per_hour: float
    unit: BudgetUnit = "usd"
    weights: RiskWeights = field(default_factory=RiskWeights)
    feedback_attribute: str = DEFAULT_FEEDBACK_ATTRIBUTE
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)
    #: What one signal, or one value of `caps.share_key`, can take of the budget (`risk_caps`).
    caps: ShareCaps = field(default_factory=ShareCaps)

    @property
    def budget_key(self) -> str:
        return "usd_per_hour" if self.unit == "usd" else "calls_per_hour"


@dataclass(frozen=True, slots=True)
class Decision:
    """One run's sampling decision; `expected_cost` is set aside in the pacing while it is judged."""

    probability: float
    included: bool
    expected_cost: float = 0.0


def parse_sampling(
    given: float | Mapping[str, Any] | PacingPolicy, path: str = "sampling"
) -> float | PacingPolicy:
    """A fixed rate, or a pacing policy, from `bind(sampling=...)` or the config's `sampling:`;
    errors name the bad key."""
    if isinstance(given, PacingPolicy):
        return given
    if not isinstance(given, Mapping):
        return _rate(given, path)
    unknown = [key for key in given if key not in (*_KEYS, *_CAP_KEYS)]
    if unknown:
        raise ConfigError(f"{path}.{unknown[0]}", f"unknown key; expected one of: {', '.join(_KEYS)}")
    budgets = [key for key in ("usd_per_hour", "calls_per_hour") if given.get(key) is not None]
    if not budgets:
        for key in ("weights", "feedback_attribute", *_CAP_KEYS):
            if given.get(key) is not None:
                raise ConfigError(
                    f"{path}.{key}",
                    "applies to budget-paced sampling only: give usd_per_hour or calls_per_hour",
                )
        return _rate(given.get("rate", DEFAULT_RATE), f"{path}.rate")
    if len(budgets) > 1:
        raise ConfigError(f"{path}.{budgets[1]}", f"give one budget: {budgets[0]} or {budgets[1]}, not both")
    key = budgets[0]
    if given.get("rate") is not None:
        raise ConfigError(f"{path}.rate", f"give either a fixed rate or a budget ({key}), not both")
    per_hour = given[key]
    if (
        isinstance(per_hour, bool)
        or not isinstance(per_hour, (int, float))
        or not MIN_PER_HOUR <= per_hour < math.inf
    ):
        raise ConfigError(
            f"{path}.{key}", f"must be a finite number of at least {MIN_PER_HOUR:g}, got {per_hour!r}"
        )
    weights = given.get("weights") or {}
    if not isinstance(weights, Mapping):
        raise ConfigError(f"{path}.weights", f"should be a mapping of signal: weight, got {weights!r}")
    feedback = given.get("feedback_attribute") or DEFAULT_FEEDBACK_ATTRIBUTE
    if not isinstance(feedback, str):
        raise ConfigError(f"{path}.feedback_attribute", f"should be an attribute name, got {feedback!r}")
    return PacingPolicy(
        float(per_hour),
        "usd" if key == "usd_per_hour" else "calls",
        RiskWeights.from_mapping(weights, f"{path}.weights"),
        feedback,
        caps=_caps(given, path),
    )


def _caps(given: Mapping[str, Any], path: str) -> ShareCaps:
    settings = {key: given[key] for key in _CAP_KEYS if given.get(key) is not None}
    share_key = settings.get("share_key")
    if share_key is not None:
        path_getter(share_key, f"{path}.share_key")  # an unknown path is refused here
    try:
        return ShareCaps(**settings)
    except (TypeError, ValueError) as exc:
        name = next((key for key in _CAP_KEYS if key in str(exc)), "share_key")
        raise ConfigError(f"{path}.{name}", str(exc)) from None


def _rate(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ConfigError(path, f"sampling rate must be between 0 and 1, got {value!r}")
    return float(value)


class PacedSampler:
    """The per-binding state of budget-paced sampling: risk signals and the pacing controller."""

    def __init__(self, policy: PacingPolicy) -> None:
        self.policy = policy
        self.risk = RiskSignals(policy.weights, policy.feedback_attribute, policy.clock)
        self.caps = RiskCaps(policy.caps, policy.weights, policy.clock)
        # A judged run costs at least one call; its price in dollars is learnt from the first.
        initial = 1.0 if policy.unit == "calls" else None
        self.pacing = PacingController(policy.per_hour, clock=policy.clock, initial_cost=initial)

    def decide(self, run: AgentRun, checks: Sequence[Score] = ()) -> Decision:
        """Whether to judge `run` (`checks`: its quick scores), and its inclusion probability.
        An included run's expected cost is set aside: `settle` it when its judging ends."""
        weight = self.caps.weight(run, self.risk.signals(run, checks))
        probability = self.pacing.probability(weight)
        if randomness(run.trace_id) < threshold_for(probability):
            return Decision(probability, included=False)
        return Decision(probability, included=True, expected_cost=self.pacing.admitted())

    def settle(self, decision: Decision, score: Score | None) -> None:
        """The included run's judging ended with `score` (None: it was not judged after all)."""
        if not decision.included:
            return
        if score is None:
            self.pacing.released(decision.expected_cost)
            return
        self.pacing.settled(decision.expected_cost, self.cost(score))

    def cost(self, score: Score) -> float | None:
        """What judging the run cost, in the budget's unit (None: not known)."""
        usage = score.usage
        if usage is None or usage.calls == 0:
            return 0.0  # nothing was asked (a cached reply, a skip, a failure before any call)
        if self.policy.unit == "calls":
            return float(usage.calls)
        if usage.cost_usd is None:
            throttled.warning(
                f"unpriced:{score.scorer}",
                "otel_scorers: %s: the judge model %s has no price, so usd_per_hour cannot count its "
                "spend; give the judge's prices, or use calls_per_hour",
                score.scorer,
                usage.model,
            )
            return None
        return usage.cost_usd


class Screens(Protocol):
    """What admitting a run needs of a binding (`Binding`)."""

    @property
    def name(self) -> str: ...

    @property
    def paced(self) -> PacedSampler | None: ...

    def screened(self, run: AgentRun) -> str | None: ...

    def limited(self) -> str: ...


B = TypeVar("B", bound=Screens)


class Decided(Generic[B]):
    """One run's admission by bindings, with the pacing decisions of the paced ones: `bindings`
    are those that admitted it. Every decision held is settled once: `settle` with the scores,
    or `release` when the run is not scored after all (the judge lane is full, it failed)."""

    def __init__(self) -> None:
        self.bindings: list[B] = []
        self._open: dict[str, tuple[PacedSampler, Decision]] = {}

    @classmethod
    def of(
        cls,
        bindings: Sequence[B],
        run: AgentRun,
        not_admitted: Callable[[str, str], None] | None = None,
        checks: Sequence[Score] = (),
    ) -> Decided[B]:
        """Admit `run` per binding (`checks`: its quick scores, the risk signals of paced
        bindings); `not_admitted(binding, why)` hears the rest."""
        decided: Decided[B] = cls()
        for binding in bindings:
            admission = decided.admit(binding, run, checks)
            if admission == "admitted":
                decided.bindings.append(binding)
            elif not_admitted is not None:
                not_admitted(binding.name, admission)
        return decided

    def admit(self, binding: B, run: AgentRun, checks: Sequence[Score] = ()) -> str:
        """The filter, then the trace-id rate or the pacing's decision, then the rate limit. An
        admitted paced run's decision is held (its expected cost set aside) until settled."""
        screened = binding.screened(run)
        if screened is not None:
            return screened
        paced = binding.paced
        if paced is None:
            return binding.limited()
        decision = paced.decide(run, checks)
        if not decision.included:
            return "sampled_out"
        admission = binding.limited()
        if admission == "admitted":
            self._open[binding.name] = (paced, decision)
        else:
            paced.settle(decision, None)
        return admission

    def settle(self, scores: list[Score]) -> list[Score]:
        """`scores`, each paced binding's with its inclusion probability, its cost given to its
        pacing; the decisions no score came back for are given back."""
        if self._open:
            for index, score in enumerate(scores):
                found = self._open.pop(score.scorer, None)
                if found is not None:
                    sampler, decision = found
                    sampler.settle(decision, score)
                    scores[index] = replace(score, sampling_probability=decision.probability)
        self.release()
        return scores

    def release(self) -> None:
        """The run is not scored after all: what its decisions set aside is given back."""
        for sampler, decision in self._open.values():
            sampler.settle(decision, None)
        self._open.clear()
