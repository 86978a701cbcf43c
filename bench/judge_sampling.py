"""Budget-paced, risk-weighted judge sampling against a fixed ratio, on a synthetic stream.

The stream: runs arrive at 20,000 an hour; 5% are bad; the quick checks fail on 60% of the bad
runs and on 2% of the good ones; the judge sees through every run (a bad run fails, a good one
passes) and costs about $0.001 a run, billed two seconds after the decision; the budget pays for
2% of the runs. Each run goes through the real `PacedSampler` (risk signals, pacing controller,
trace-id decision), as an `AgentRun` with its quick scores, on a simulated clock.

1. Bad runs judged (100,000 runs): budget-paced with the default weights against a fixed ratio
   at the same spend (the same trace ids, OpenTelemetry's consistent rule).
2. The estimated pass rate (inverse-probability weighted, as the dashboard computes it) against
   the stream's true pass rate, and how often its 95% interval covers the truth, over 100 seeds.
3. Spend per hour through five hours: steady, steady, a tenfold spike for 20 minutes, traffic
   dropping to zero for 10 minutes, steady; then every hour of `--pacing-seeds` such streams.
   The fixed ratio that spends the budget in a steady hour is shown beside it, behind the
   judge's own hourly cap (`CostBudget`).
4. The agent thread's cost per span: eleven quick checks plus a judge binding, budget-paced or
   at a fixed ratio (`hot_path.py`'s measurement: the processor's hooks, scoring elsewhere).

    python bench/judge_sampling.py [--seeds 100] [--runs 100000]
"""

from __future__ import annotations

import argparse
import heapq
import math
import random
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from otel_scorers.model import AgentRun, JudgeUsage, Score
from otel_scorers.scorers.judge.budget import CostBudget
from otel_scorers.selection.paced_sampling import PacedSampler, PacingPolicy
from otel_scorers.selection.sampling import TraceIdSampler

RUNS_PER_HOUR = 20_000
BAD_SHARE = 0.05
CAUGHT_BAD, FLAGGED_GOOD = 0.60, 0.02
BUDGET_SHARE = 0.02
COST_USD = 0.001
BILLED_AFTER_S = 2.0
BUDGET_USD_PER_HOUR = BUDGET_SHARE * RUNS_PER_HOUR * COST_USD
Z95 = 1.959964

FAILED_CHECK = (Score("no_tool_errors", 0.0, "fail"),)
PASSED_CHECK = (Score("no_tool_errors", 1.0, "pass"),)


class Clock:
    """Simulated time: `now` is set by the stream, read by the sampler."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True, slots=True)
class SyntheticRun:
    at: float
    trace_id: int
    bad: bool
    flagged: bool


def stream(rng: random.Random, rate_at: Callable[[float], float], end_s: float) -> Iterator[SyntheticRun]:
    """Poisson arrivals at `rate_at(t)` runs per second (piecewise constant, re-read each arrival)."""
    t = 0.0
    while True:
        rate = rate_at(t)
        if rate <= 0:
            t = math.floor(t / 60 + 1) * 60  # nothing this minute: look again at the next one
            if t >= end_s:
                return
            continue
        t += rng.expovariate(rate)
        if t >= end_s:
            return
        bad = rng.random() < BAD_SHARE
        flagged = rng.random() < (CAUGHT_BAD if bad else FLAGGED_GOOD)
        yield SyntheticRun(t, rng.getrandbits(128) or 1, bad, flagged)


def agent_run(run: SyntheticRun) -> AgentRun:
    end_ns = int(run.at * 1e9)
    return AgentRun(
        run.trace_id,
        1,
        "weather-agent",
        "What's the weather in Paris?",
        "It is sunny in Paris, 21°C.",
        models=("gpt-4o-mini",),
        start_ns=end_ns - 1_500_000_000,
        end_ns=end_ns,
        status="ok",
    )


@dataclass
class Outcome:
    judged: list[tuple[float, bool]]  # (inclusion probability, passed) of each judged run
    bad_judged: int
    runs: int
    good: int
    spend_by_hour: dict[int, float]
    spend_by_5min: dict[int, float]


def run_paced(rng: random.Random, rate_at: Callable[[float], float], end_s: float) -> Outcome:
    clock = Clock()
    sampler = PacedSampler(PacingPolicy(BUDGET_USD_PER_HOUR, clock=clock))
    bills: list[tuple[float, int, Any, Score]] = []  # (due, order, decision, score)
    outcome = Outcome([], 0, 0, 0, {}, {})
    order = 0

    def settle_until(t: float) -> None:
        while bills and bills[0][0] <= t:
            due, _, decision, score = heapq.heappop(bills)
            clock.now = due
            sampler.settle(decision, score)
            cost = score.usage.cost_usd if score.usage is not None else 0.0
            outcome.spend_by_hour[int(due // 3600)] = outcome.spend_by_hour.get(int(due // 3600), 0.0) + (
                cost or 0.0
            )
            outcome.spend_by_5min[int(due // 300)] = outcome.spend_by_5min.get(int(due // 300), 0.0) + (
                cost or 0.0
            )

    for run in stream(rng, rate_at, end_s):
        settle_until(run.at)
        clock.now = run.at
        outcome.runs += 1
        outcome.good += not run.bad
        decision = sampler.decide(agent_run(run), FAILED_CHECK if run.flagged else PASSED_CHECK)
        if not decision.included:
            continue
        outcome.judged.append((decision.probability, not run.bad))
        outcome.bad_judged += run.bad
        cost = COST_USD * rng.uniform(0.7, 1.3)
        score = Score(
            "answer_relevancy",
            0.0 if run.bad else 1.0,
            "fail" if run.bad else "pass",
            usage=JudgeUsage("openai/gpt-4o-mini", 1, 600, 80, cost),
        )
        order += 1
        heapq.heappush(bills, (run.at + BILLED_AFTER_S, order, decision, score))
    settle_until(math.inf)
    return outcome


def estimate(judged: list[tuple[float, bool]]) -> tuple[float, float, float]:
    """The pass rate, inverse-probability weighted, and its 95% interval: the dashboard's
    formula over `otel_scorers.estimate.weight` and `.variance_weight` (README: Honest estimates)."""
    weight = sum(1 / p for p, _ in judged)
    passed = sum(1 / p for p, ok in judged if ok)
    spread_all = sum((1 / p) * (1 / p - 1) for p, _ in judged)
    spread_passed = sum((1 / p) * (1 / p - 1) for p, ok in judged if ok)
    rate = passed / weight
    variance = (spread_passed * (1 - 2 * rate) + rate * rate * spread_all) / (weight * weight)
    half = Z95 * math.sqrt(max(variance, 0.0))
    return rate, rate - half, rate + half


def steady(_t: float) -> float:
    return RUNS_PER_HOUR / 3600


def part_1_and_2(seeds: int, runs: int) -> None:
    hours = runs / RUNS_PER_HOUR
    errors: list[float] = []
    covered = 0
    ratios: list[float] = []
    started = time.perf_counter()
    for seed in range(seeds):
        rng = random.Random(seed)
        outcome = run_paced(rng, steady, hours * 3600)
        spent_runs = len(outcome.judged)
        # The fixed ratio that judges as many runs (so spends as much) over the same trace ids.
        fixed = TraceIdSampler(spent_runs / outcome.runs)
        rng = random.Random(seed)
        fixed_bad = sum(run.bad and fixed.sampled(run.trace_id) for run in stream(rng, steady, hours * 3600))
        ratios.append(outcome.bad_judged / max(fixed_bad, 1))
        truth = outcome.good / outcome.runs
        rate, low, high = estimate(outcome.judged)
        errors.append(rate - truth)
        covered += low <= truth <= high
        if seed == 0:
            print(
                f"seed 0: {outcome.runs:,} runs, {spent_runs:,} judged ({spent_runs / outcome.runs:.2%}), "
                f"{outcome.runs - outcome.good:,} bad"
            )
            print(
                f"  bad runs judged: paced {outcome.bad_judged}, fixed ratio at the same spend {fixed_bad} "
                f"-> {outcome.bad_judged / max(fixed_bad, 1):.1f}x"
            )
            print(
                f"  pass rate: true {truth:.4f}, estimated {rate:.4f} (95% interval {low:.4f} to {high:.4f})"
            )
    elapsed = time.perf_counter() - started
    absolute = sorted(abs(error) for error in errors)
    print(f"over {seeds} seeds ({elapsed:.0f} s):")
    print(
        f"  bad runs judged vs fixed ratio: median {statistics.median(ratios):.1f}x, lowest {min(ratios):.1f}x"
    )
    print(
        f"  estimated pass rate error: median |error| {statistics.median(absolute) * 100:.2f} pp, "
        f"largest {absolute[-1] * 100:.2f} pp, within 1 pp in {sum(a <= 0.01 for a in absolute)}/{seeds}"
    )
    print(f"  95% interval covers the truth in {covered}/{seeds} seeds")


def scenario(t: float) -> float:
    """Five hours: steady, steady, 10x for minutes 20-40 of hour 3, none for minutes 20-30 of hour 4, steady."""
    hour, minute = divmod(t / 60, 60)
    base = RUNS_PER_HOUR / 3600
    if hour == 2 and 20 <= minute < 40:
        return 10 * base
    if hour == 3 and 20 <= minute < 30:
        return 0.0
    return base


def part_3(seeds: int) -> None:
    end_s = 5 * 3600
    outcome = run_paced(random.Random(7), scenario, end_s)
    per_hour = [outcome.spend_by_hour.get(hour, 0.0) / BUDGET_USD_PER_HOUR for hour in range(5)]
    print(
        f"budget ${BUDGET_USD_PER_HOUR:.2f}/h; hours: steady, steady, 10x spike (min 20-40), zero (min 20-30), steady"
    )
    print("  budget-paced spend / budget per hour: " + ", ".join(f"{share:.3f}" for share in per_hour))
    # Which runs are judged is chance: every hour of other streams like it, the first included.
    hours = [per_hour]
    for seed in range(1, seeds):
        other = run_paced(random.Random(7 + seed), scenario, end_s)
        hours.append([other.spend_by_hour.get(hour, 0.0) / BUDGET_USD_PER_HOUR for hour in range(5)])
    every = [share for shares in hours for share in shares]
    first = [shares[0] for shares in hours]
    print(
        f"  over {seeds} streams: every hour {min(every):.3f} to {max(every):.3f} of the budget "
        f"(the first {min(first):.3f} to {max(first):.3f}); hours above 1.02x: "
        f"{sum(share > 1.02 for share in every)} of {len(every)}"
    )
    five = [outcome.spend_by_5min.get(k, 0.0) / (BUDGET_USD_PER_HOUR / 12) for k in range(60)]
    active = [share for k, share in enumerate(five) if scenario(k * 300 + 150) > 0]
    print(f"  per 5 minutes with traffic: {min(active):.2f} to {max(active):.2f} of the budget's pace")

    # A fixed ratio that spends the budget in a steady hour, behind the judge's hourly cap.
    rng = random.Random(7)
    fixed = TraceIdSampler(BUDGET_SHARE)
    clock = Clock()
    cap = CostBudget(BUDGET_USD_PER_HOUR, clock)
    spent = [0.0] * 5
    refused_minutes: set[int] = set()
    for run in stream(rng, scenario, end_s):
        clock.now = run.at
        if not fixed.sampled(run.trace_id):
            continue
        cost = COST_USD * rng.uniform(0.7, 1.3)
        if cap.reserve(cost):
            cap.settle(cost, cost)
            spent[int(run.at // 3600)] += cost
        else:
            refused_minutes.add(int(run.at // 60))
    print(
        "  fixed ratio 2% behind the hourly cap: "
        + ", ".join(f"{share / BUDGET_USD_PER_HOUR:.3f}" for share in spent)
        + f"; judging refused in {len(refused_minutes)} minutes"
    )


def part_4(spans: int, rounds: int) -> None:
    import hot_path  # the hot-path benchmark's workload and measurement
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider

    from otel_scorers import ScoringSpanProcessor, bind, scorers
    from otel_scorers.scorers.judge import Judge, JudgeConfig

    def with_judge(sampling: Any) -> Callable[[TracerProvider], ScoringSpanProcessor]:
        def factory(provider: TracerProvider) -> ScoringSpanProcessor:
            judge = Judge(JudgeConfig(model="openai/gpt-4o-mini", api_base="http://127.0.0.1:9"))
            processor = ScoringSpanProcessor(
                [*hot_path.ELEVEN_CHECKS, bind(scorers.answer_relevancy(judge=judge), sampling=sampling)],
                tracer_provider=provider,
                meter_provider=MeterProvider(),
                logger_provider=LoggerProvider(),
                max_queue_size=100_000,
            )
            processor.engine.submit = lambda job: True  # type: ignore[method-assign]
            return processor

        return factory

    fixed: list[float] = []
    paced: list[float] = []
    for _ in range(rounds):
        fixed.append(hot_path.measure(hot_path.inside_runs, with_judge(BUDGET_SHARE), spans)["agent_cpu_us"])
        paced.append(
            hot_path.measure(hot_path.inside_runs, with_judge({"usd_per_hour": BUDGET_USD_PER_HOUR}), spans)[
                "agent_cpu_us"
            ]
        )
    ratios = [p / f for f, p in zip(fixed, paced, strict=True)]
    print(
        f"agent thread CPU per span (11 checks + a judge binding; medians of {rounds} rounds): "
        f"fixed ratio {statistics.median(fixed):.1f} µs, budget-paced {statistics.median(paced):.1f} µs "
        f"(ratio {statistics.median(ratios):.2f})"
    )
    decide = decision_cost()
    print(f"a paced decision, on the engine's thread: {decide:.1f} µs per run")


def decision_cost(runs: int = 50_000) -> float:
    rng = random.Random(1)
    clock = Clock()
    sampler = PacedSampler(PacingPolicy(BUDGET_USD_PER_HOUR, clock=clock))
    prepared = [agent_run(run) for run in stream(rng, steady, runs / RUNS_PER_HOUR * 3600)]
    started = time.perf_counter()
    for index, run in enumerate(prepared):
        clock.now = index * 0.18
        sampler.decide(run, PASSED_CHECK)
    return (time.perf_counter() - started) / len(prepared) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--spans", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--pacing-seeds", type=int, default=10, help="streams whose hours part 3 measures")
    args = parser.parse_args()
    print("== 1, 2: bad runs judged, and the estimated pass rate ==")
    part_1_and_2(args.seeds, args.runs)
    print("== 3: spend per hour ==")
    part_3(args.pacing_seeds)
    print("== 4: the agent's thread ==")
    part_4(args.spans, args.rounds)


if __name__ == "__main__":
    main()
