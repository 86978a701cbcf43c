"""Quick checks per second through the public scoring path, as the engine runs them.

Each built `AgentRun` goes through `pipeline.score_run` with the eleven checks bound (admission:
filter, trace-id sampling, rate limit; then evaluation into a `Score` with label, duration and
start time). The baseline in the same run is the bare check functions called directly, so the
ratio is the cost of the binding machinery. Runs vary: outputs of 20 to 300 characters, 0 to 6
tool calls in mixed states. Then the checks of structure (`tool_args_valid`, `json_valid`,
`json_schema`, `trajectory`) on runs that carry what they read (a JSON answer, arguments,
declared tool schemas), through the same path, against the eleven on those runs.

    python bench/checks.py [--runs 20000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import time

from otel_scorers import AgentRun, ToolCall, bind, checks
from otel_scorers.model import ToolDefinition
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


CITY_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "units": {"enum": ["C", "F"]}},
    "required": ["city"],
    "additionalProperties": False,
}
DEFINITIONS = tuple(ToolDefinition(name, CITY_SCHEMA, "gen_ai.tool.definitions") for name in TOOLS)
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "temp_c": {"type": "number"}, "sky": {"type": "string"}},
    "required": ["city", "temp_c"],
}
STRUCTURE_CHECKS = [
    checks.tool_args_valid(),
    checks.json_valid(),
    checks.json_schema(ANSWER_SCHEMA),
    checks.trajectory(["get_weather", "summarize"], mode="superset"),
]


def make_structured_runs(count: int, seed: int = 11) -> list[AgentRun]:
    """The varied runs, with a JSON answer, arguments on every call and the tools declared; one
    answer and one call in twenty break their schemas (a number for the city)."""
    generator = random.Random(seed)
    cities = ["Paris", "Oslo", "Rome", "Lima"] * 5 + [42]
    runs = []
    for run in make_runs(count, seed):
        city = generator.choice(cities)
        answer = f'{{"city": "{city}", "temp_c": {generator.randint(-10, 35)}, "sky": "{run.output[:20]}"}}'
        calls = tuple(
            ToolCall(call.name, arguments={"city": generator.choice(cities)}, state=call.state)
            for call in run.tool_calls
        )
        runs.append(
            AgentRun(
                trace_id=run.trace_id,
                span_id=run.span_id,
                agent_name=run.agent_name,
                input=run.input,
                output=answer,
                tool_calls=calls,
                tool_definitions=DEFINITIONS,
            )
        )
    return runs


def bare(runs: list[AgentRun]) -> float:
    started = time.perf_counter()
    for run in runs:
        for check in CHECKS:
            check.score(run)
    return time.perf_counter() - started


def through_engine(runs: list[AgentRun], which: list[checks.Check] = CHECKS) -> float:
    bindings = [bind(check) for check in which]

    async def score_all() -> float:
        started = time.perf_counter()
        for run in runs:
            await score_run(bindings, run)
        return time.perf_counter() - started

    return asyncio.run(score_all())


def alone(runs: list[AgentRun], check: checks.Check, rounds: int) -> float:
    """Seconds of this process's CPU per run to score `check` alone through `score_run`: the
    clock other processes on a shared machine do not move."""
    bindings = [bind(check)]

    async def score_all() -> float:
        started = time.process_time()
        for run in runs:
            await score_run(bindings, run)
        return time.process_time() - started

    return min(asyncio.run(score_all()) for _ in range(rounds)) / len(runs)


def long_text(rounds: int) -> None:
    """Every code scorer on a 20,000-character input and output: ms per call, fastest of `rounds`,
    against the bare `includes` check on the same run (baseline measured alternately)."""
    from otel_scorers.scorers.declarations import DECLARED

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
    built = {d.kind: d.factory(**d.example_args) for d in DECLARED if d.family == "code scorers"}
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
    structured = make_structured_runs(args.runs)
    print(
        f"each check alone through the same path on {args.runs} runs with a JSON answer, arguments "
        "and declared tool schemas (CPU time of this process, fastest of rounds):"
    )
    eleven = [alone(structured, check, args.rounds) for check in CHECKS]
    mean = sum(eleven) / len(eleven)
    print(
        f"  the eleven: mean {mean * 1e6:.2f} µs, from {min(eleven) * 1e6:.2f} to {max(eleven) * 1e6:.2f} µs a run"
    )
    for check in STRUCTURE_CHECKS:
        each = alone(structured, check, args.rounds)
        print(f"  {check.name:<16} {each * 1e6:6.2f} µs a run  (x{each / mean:.2f} the eleven's mean)")
    long_text(args.rounds)


if __name__ == "__main__":
    main()
