"""A spend budget per hour turned into a sampling probability that keeps spend on budget.

`PacingController` answers, for each run as it arrives, the probability `min(1, base * weight)`
of judging it, where `base` is chosen so that the expected spend of the judged runs tracks the
budget:

- *Demand*: the runs that arrived in the last minute or so, by weight (exponentially decayed
  counts, so a tenfold spike shows within seconds and a drop to zero as quickly).
- *Target*: the budget's rate, plus what is left over (or overspent) divided by a catch-up time,
  so that a minute of overspending is paid back over the next minutes, and budget left unspent
  while there was nothing to judge is used later, up to `carry_s` worth of it.
- *Hours*: the budget is an hour's, and each hour (counted from the first run) has its own: what
  one hour left over, or overspent, is not carried into the next, and in an hour's last
  `catch_up_s` what is left is spread over the time the hour has left, so that the hour ends on
  its budget. A judged run costs a few tenths of a percent of an hour's budget, and which runs
  are judged is chance: the hour aims at `1 - HEADROOM` of its budget so that this scatter does
  not take it over.
- *Solve*: the `base` whose expected number of judged runs per second, summed over the demand
  (`Σ rate_w * min(1, base * w)`), buys the target at the learnt cost per judged run.

Spend is counted in whatever unit the budget is in (dollars as the judge prices them, or
calls): `admitted()` sets a judged run's expected cost aside, `settled()` replaces it with what
it really cost. Its clock starts with the first run (budget before any run arrived is not a
lull in traffic, and is not carried over), and the first runs are judged at the budget's pace.
The controller only shapes the rate; the judge's own hourly cap stays the
backstop. The clock is injectable, so a simulated hour takes no time.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from otel_scorers.fork_safety import renew_in_child

#: The budget's period: each hour, counted from the first run, spends at most its budget.
HOUR_S = 3600.0
#: The least budget an hour (dollars or calls): a minute's share of a smaller one, the first
#: guess at a judged run's cost, rounds to 0 in floating point (5e-324 an hour failed every
#: decision dividing by it).
MIN_PER_HOUR = 1e-6
#: The share of an hour's budget kept unplanned, for the scatter of which runs are judged (a
#: steady stream judging a few hundred runs an hour ends its hours within about 1% of the aim).
HEADROOM = 0.01
#: How long demand is remembered (the time constant of its exponential decay).
DEMAND_WINDOW_S = 30.0
#: Over how long a surplus or a debt is spread.
CATCH_UP_S = 600.0
#: At most this much unspent budget (in seconds of budget) is carried over to be spent later,
#: within its hour.
CARRY_S = 900.0
#: The target never drops below, nor rises above, these multiples of the budget's rate: the
#: probability stays above zero (every run keeps a chance, which unbiased estimates need), and a
#: carried-over surplus is spent over minutes, not at once.
MIN_TARGET, MAX_TARGET = 0.25, 4.0
#: How often the base probability is solved again, at most (seconds).
SOLVE_EVERY_S = 1.0
#: The demand of the first runs is counted over at least this long (seconds): long enough that
#: a few runs arriving together at start-up do not read as hundreds a second, short enough that
#: a busy stream's first quarter second is not judged far past the budget's pace.
FIRST_RUN_S = 0.25
#: How quickly the cost per judged run follows what judged runs cost (weight of the newest).
COST_SMOOTHING = 0.05
#: Distinct weights kept apart in the demand before similar ones are merged.
MAX_WEIGHTS = 256


class PacingController:
    """Spend `per_hour` (dollars or calls) by judging each run with probability `min(1, base *
    weight)`, `base` adapted continuously. Until the first judged run's cost is known, a judged
    run is assumed to cost a minute of budget (`initial_cost` overrides that). Thread-safe."""

    def __init__(
        self,
        per_hour: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        initial_cost: float | None = None,
        demand_window_s: float = DEMAND_WINDOW_S,
        catch_up_s: float = CATCH_UP_S,
        carry_s: float = CARRY_S,
    ) -> None:
        if not MIN_PER_HOUR <= per_hour < math.inf:
            raise ValueError(
                f"the budget per hour must be a finite number of at least {MIN_PER_HOUR:g}, got {per_hour}"
            )
        self.per_hour = per_hour
        self._per_second = per_hour / HOUR_S
        self._aim = self._per_second * (1.0 - HEADROOM)  # what each second of an hour plans to spend
        self._clock = clock
        self._window_s = demand_window_s
        self._catch_up_s = catch_up_s
        self._carry = self._per_second * carry_s
        self._cost = initial_cost if initial_cost is not None and initial_cost > 0 else None
        self._demand: dict[float, float] = {}  # weight -> decayed count of runs
        now = clock()
        self._running = False  # until the first run
        self._started = now
        self._hour_start = now
        self._updated = now
        self._solved_at = -math.inf
        self._balance = 0.0  # this hour's budget accrued minus spent
        self._pending = 0.0  # expected cost of judged runs not yet settled
        self._base = 0.0  # nothing is judged before the first run's demand is solved for
        self._lock = threading.Lock()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        self._lock = threading.Lock()

    # ---- deciding --------------------------------------------------------------------------

    def probability(self, weight: float) -> float:
        """A run of `weight` arrived: its probability of being judged (the run counts in the
        demand whether or not it is judged)."""
        with self._lock:
            now = self._clock()
            if not self._running:
                # The first run starts the clock: budget "left unspent" before any run arrived
                # was not a lull in traffic, and is not spent later (nor does the demand window
                # count the time before it).
                self._started = self._hour_start = self._updated = now
                self._running = True
            self._advance(now)
            key = round(weight, 3)
            self._demand[key] = self._demand.get(key, 0.0) + 1.0
            if len(self._demand) > MAX_WEIGHTS:
                self._merge()
            # In its first second the demand is new with every run: solved for each, so that the
            # first runs are judged at the budget's pace, not all of them until the first solve.
            if now - self._solved_at >= SOLVE_EVERY_S or now - self._started < SOLVE_EVERY_S:
                self._solve(now)
            return min(1.0, self._base * weight)

    @property
    def base(self) -> float:
        """The probability of a run of weight 1, as last solved."""
        return self._base

    @property
    def cost_per_run(self) -> float:
        """What a judged run is expected to cost, in the budget's unit."""
        return self._cost if self._cost is not None else self._per_second * 60.0

    # ---- spending --------------------------------------------------------------------------

    def admitted(self) -> float:
        """A run is to be judged: its expected cost is set aside until `settled` (returned, to
        be given back to `settled` or `released`)."""
        expected = self.cost_per_run
        with self._lock:
            self._pending += expected
        return expected

    def released(self, expected: float) -> None:
        """A run that was to be judged was not (dropped before any call)."""
        with self._lock:
            self._pending = max(0.0, self._pending - expected)

    def settled(self, expected: float, actual: float | None) -> None:
        """A judged run's work ended; `actual` is what it cost (None: unknown, counted as
        expected, and not learnt from)."""
        with self._lock:
            self._advance(self._clock())
            self._pending = max(0.0, self._pending - expected)
            spent = expected if actual is None else actual
            self._balance -= spent  # a debt is kept until its hour ends, however large
            if actual is not None and actual >= 0:
                if self._cost is None:
                    if actual > 0:
                        self._cost = actual
                else:
                    self._cost += COST_SMOOTHING * (actual - self._cost)
                    self._cost = max(self._cost, 1e-12)

    # ---- the controller --------------------------------------------------------------------

    def _advance(self, now: float) -> None:
        elapsed = now - self._updated
        if elapsed <= 0:
            return
        self._updated = now
        accrued = elapsed
        hours = math.floor((now - self._hour_start) / HOUR_S)
        if hours >= 1:
            # A new hour: its budget is its own, what the last one left or overspent is not carried.
            self._hour_start += hours * HOUR_S
            self._balance = 0.0
            accrued = now - self._hour_start
        self._balance = min(self._carry, self._balance + accrued * self._aim)
        decay = math.exp(-elapsed / self._window_s)
        demand = self._demand
        for key in list(demand):
            kept = demand[key] * decay
            if kept < 1e-6:
                del demand[key]
            else:
                demand[key] = kept

    def _merge(self) -> None:
        """Too many distinct weights: merge them into fewer (two significant digits)."""
        merged: dict[float, float] = {}
        for weight, count in self._demand.items():
            key = float(f"{weight:.2g}")
            merged[key] = merged.get(key, 0.0) + count
        self._demand = merged

    def _solve(self, now: float) -> None:
        self._solved_at = now
        # The decayed counts sum to rate * window once the window has passed; before, to rate *
        # the time the window has seen.
        # The first runs count as arriving over at least `FIRST_RUN_S`.
        elapsed = max(now - self._started, FIRST_RUN_S)
        seen_s = self._window_s * -math.expm1(-elapsed / self._window_s)
        if not self._demand:
            return
        left = self._balance - self._pending
        # What is left is spread over the catch-up time, or over what is left of the hour when
        # that is shorter, so that the hour ends on its aim whatever chance judged before.
        hour_left = self._hour_start + HOUR_S - now
        target = self._aim + left / max(min(self._catch_up_s, hour_left), SOLVE_EVERY_S)
        target = min(max(target, MIN_TARGET * self._per_second), MAX_TARGET * self._per_second)
        runs_per_second = target / self.cost_per_run
        self._base = solve_base(
            [(weight, count / seen_s) for weight, count in self._demand.items()], runs_per_second
        )


def solve_base(demand: list[tuple[float, float]], wanted: float) -> float:
    """The `base` for which `Σ rate * min(1, base * weight)` over `demand` ((weight, rate)
    pairs) is `wanted`; the base that judges every run when the demand is no more than that."""
    ordered = sorted((item for item in demand if item[0] > 0 and item[1] > 0), reverse=True)
    if not ordered:
        return 1.0
    if sum(rate for _, rate in ordered) <= wanted:
        return 1.0 / ordered[-1][0]
    # With the heaviest `m` weights saturated (probability 1), the rest are linear in base.
    saturated = 0.0
    linear = sum(weight * rate for weight, rate in ordered)
    for weight, rate in ordered:
        base = (wanted - saturated) / linear
        if base * weight <= 1.0:
            return max(base, 0.0)
        saturated += rate
        linear -= weight * rate
    return 1.0 / ordered[-1][0]  # not reached: the sum check above covers it
