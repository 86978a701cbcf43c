"""Quick checks per second through the public scoring path, as the engine runs them.

Each built `AgentRun` goes through `pipeline.score_run` with the eleven checks bound (admission:
filter, trace-id sampling, rate limit; then evaluation into a `Score` with label, duration and
start time). The baseline in the same run is the bare check functions called directly, so the
ratio is the cost of the binding machinery. Runs vary: outputs of 20 to 300 characters, 0 to 6
tool calls in mixed states.

    python bench/checks.py [--runs 20000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import time

from otel_scorers import AgentRun, ToolCall, bind, checks
from otel_scorers.pipeline.scoring_pipeline import score_run

WORDS = [
    "the",
    "weather",
    "in",
    "paris",
    "is",
    "sunny",
    "and",
    "warm",
    "today",
    "with",
    "a",
    "light",
    "breeze",
    "from",
    "the",
    "west",
    "21°C",
]
TOOLS = ["get_weather", "get_time", "search", "lookup", "summarize", "delete_user"]
STATES = ["ok", "ok", "ok", "error", "incomplete", "result_error"]


def make_runs(count: int, seed: int = 7) -> list[AgentRun]:
    generator = random.Random(seed)
    runs = []
    for index in range(count):
        length = generator.randint(20, 300)
        words: list[str] = []
        while sum(len(word) + 1 for word in words) < length:
            words.append(generator.choice(WORDS))
        output = " ".join(words)[:length]
        calls = tuple(
            ToolCall(generator.choice(TOOLS), state=generator.choice(STATES))  # type: ignore[arg-type]
            for _ in range(generator.randint(0, 6))
        )
        runs.append(
            AgentRun(
                trace_id=generator.getrandbits(128),
                span_id=index + 1,
                agent_name="weather",
                input="What's the weather in Paris?",
                output=output,
                tool_calls=calls,
            )
        )
    return runs


CHECKS = [
    checks.includes("sunny"),
    checks.excludes("sorry"),
    checks.equals("the weather in paris is sunny"),
    checks.matches(r"\d+°C", flags="i"),
    checks.similarity("the weather in paris is sunny and warm"),
    checks.called_tool("get_weather", times=1),
    checks.did_not_call("delete_user"),
    checks.tool_order(["get_weather", "summarize"]),
    checks.max_tool_calls(4),
    checks.used_no_tools(),
    checks.no_tool_errors(),
]


def bare(runs: list[AgentRun]) -> float:
    started = time.perf_counter()
    for run in runs:
        for check in CHECKS:
            check.score(run)
    return time.perf_counter() - started


def through_engine(runs: list[AgentRun]) -> float:
    bindings = [bind(check) for check in CHECKS]

    async def score_all() -> float:
        started = time.perf_counter()
        for run in runs:
            await score_run(bindings, run)
        return time.perf_counter() - started

    return asyncio.run(score_all())


def long_text(rounds: int) -> None:
    """Every code scorer on a 20,000-character input and output: ms per call, fastest of `rounds`,
    against the bare `includes` check on the same run (baseline measured alternately)."""
    from otel_scorers import scorers

    generator = random.Random(20_000)
    words = [
        "the",
        "weather",
        "is",
        "sunny.",
        "rain",
        "refund",
        "order!",
        "item",
        "good",
        "bad",
        "great",
        "terrible",
        "was",
        "not?",
    ]

    def text() -> str:
        return " ".join(generator.choice(words) for _ in range(5000))[:20_000]

    run = AgentRun(trace_id=1, span_id=1, agent_name="a", input=text(), output=text())
    built = {
        name: factory(["search"])
        if name == "trajectory_accuracy"
        else factory("search")
        if name == "tool_call_accuracy"
        else factory()
        for name, factory in scorers.CODE_SCORERS.items()
    }
    baseline = checks.includes("sunny")
    print("code scorers on a 20,000-character input and output (ms per call, fastest of rounds):")
    best: dict[str, float] = {}
    base = math.inf
    for _ in range(rounds):
        for name, scorer in built.items():
            started = time.perf_counter()
            baseline.score(run)
            base = min(base, time.perf_counter() - started)
            started = time.perf_counter()
            scorer.score(run)
            best[name] = min(best.get(name, math.inf), time.perf_counter() - started)
    for name, seconds in best.items():
        print(f"  {name:<20} {seconds * 1000:8.2f} ms  (x{seconds / base:,.0f} the includes check)")
    print("  goal: under 50 ms each")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    runs = make_runs(args.runs)
    total = args.runs * len(CHECKS)
    bare_best = min(bare(runs) for _ in range(args.rounds))
    engine_best = min(through_engine(runs) for _ in range(args.rounds))
    print(f"{args.runs} varied runs x {len(CHECKS)} checks, fastest of {args.rounds} rounds")
    print(
        f"  bare check functions:          {total / bare_best:12,.0f} checks/s  ({bare_best / total * 1e6:.2f} µs each)"
    )
    print(
        f"  public scoring path (engine):  {total / engine_best:12,.0f} checks/s  ({engine_best / total * 1e6:.2f} µs each)"
    )
    print(f"  machinery overhead: x{engine_best / bare_best:.2f} of the bare checks")
    print(
        "  goal: >= 100,000 checks/s through the public path (Mastra's scorer.run: measured by make bench-mastra)"
    )
    long_text(args.rounds)


if __name__ == "__main__":
    main()
