"""answer_relevancy's judge cost and throughput, against a local OpenAI-compatible judge.

The judge is the scripted server the tests use (tests/judge_server.py) on 127.0.0.1, answering
as a careful judge would: the answer's sentences as statements, each with a fixed verdict, and
token usage counted with cl100k. litellm talks to it over HTTP exactly as to a provider.

1. Calls and tokens per score, steps=1 (the default) against steps=3 (Mastra's three calls),
   on 10 question/answer pairs of 1 to 8 sentences, and whether both give the same score for
   the same verdicts. For scale: Mastra's own prompts cost about 2,550 input and 300 output
   tokens per score on such pairs, and 3 calls even for an empty answer.
2. Throughput through the real ScoringEngine with judge concurrency C and judge latency L
   (+-30%, the judge in its own process): scores per second as a fraction of the ideal C / L
   (C / 3L for steps=3), next to the same calls made straight through litellm.acompletion in
   the same run (the baseline), in alternating rounds. litellm costs about 9 ms of CPU per
   call, so one core cannot get near C / L once C x 9 ms approaches L.

    python bench/judge.py [--latency 0.2 1] [--concurrency 8 32] [--rounds 10] [--repeats 3]
    python bench/judge.py --catalogue    # the fifteen LLM scorers against Mastra's, calls and tokens
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider

from otel_scorers import AgentRun, Score, bind, scorers
from otel_scorers.emission import standard_emission
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.pipeline.engine import ScoredRun, ScoringEngine
from otel_scorers.pipeline.scorer_call import evaluate
from otel_scorers.scorers.answer_relevancy import AnswerRelevancyRule, RelevancyReply, score_verdicts
from otel_scorers.scorers.judge import Judge, JudgeConfig, Question
from otel_scorers.scorers.judge.prompt import render
from tests.judge_server import JudgeServer, judge_server

MODEL = "openai/gpt-4o-mini"
MASTRA_INPUT, MASTRA_OUTPUT = 2550, 300

# (question, [(sentence, verdict a careful judge gives it)])
PAIRS: list[tuple[str, list[tuple[str, str]]]] = [
    ("What is the capital of Australia?", [("The capital of Australia is Canberra.", "yes")]),
    (
        "How do I reset my password?",
        [
            ("Open Settings and choose Security.", "yes"),
            ("Click 'Reset password' and follow the link we email you.", "yes"),
        ],
    ),
    (
        "What's the weather in Paris tomorrow?",
        [
            ("Tomorrow Paris will be sunny with a high of 21°C.", "yes"),
            ("Winds will be light from the west.", "yes"),
            ("Paris is famous for the Eiffel Tower.", "no"),
        ],
    ),
    (
        "Can I return shoes I bought online?",
        [
            ("Yes, you can return unworn shoes within 30 days of delivery.", "yes"),
            ("Start the return from the Orders page of your account.", "yes"),
            ("Refunds go back to the original payment method.", "unsure"),
            ("We also sell socks and shoe-care kits.", "no"),
        ],
    ),
    (
        "Why is my Python script slow when reading a large CSV file?",
        [
            ("Reading row by row with the csv module is slow for large files.", "yes"),
            ("pandas.read_csv with the pyarrow engine is usually much faster.", "yes"),
            ("Reading only the columns you need with usecols also helps.", "yes"),
            ("Python was created by Guido van Rossum in 1991.", "no"),
            ("Profiling with cProfile will show where the time goes.", "unsure"),
        ],
    ),
    (
        "What are the side effects of ibuprofen?",
        [
            ("Common side effects of ibuprofen include stomach upset and heartburn.", "yes"),
            ("It can cause stomach ulcers or bleeding with long use.", "yes"),
            ("Some people get headaches or dizziness.", "yes"),
            ("Ibuprofen was first sold in the UK in 1969.", "no"),
            ("Take it with food to reduce stomach irritation.", "unsure"),
            ("Ask a pharmacist if you take other medicines.", "unsure"),
        ],
    ),
    (
        "How do I deploy a Docker container to Kubernetes?",
        [
            ("Push your image to a registry the cluster can pull from.", "yes"),
            ("Write a Deployment manifest that names the image and the replica count.", "yes"),
            ("Apply it with kubectl apply -f deployment.yaml.", "yes"),
            ("Add a Service to expose the pods inside or outside the cluster.", "yes"),
            ("Docker was released in 2013.", "no"),
            ("Helm charts can template these manifests.", "unsure"),
            ("Check the rollout with kubectl rollout status.", "yes"),
        ],
    ),
    (
        "Which laptop should I buy for video editing under $1500?",
        [
            ("For video editing under $1500, a MacBook Air M3 with 16 GB is a strong choice.", "yes"),
            ("On Windows, look at the ASUS ProArt with an RTX 4060.", "yes"),
            ("Aim for at least 16 GB of RAM and a 1 TB SSD.", "yes"),
            ("A colour-accurate screen matters for grading.", "unsure"),
            ("Laptops were invented in the 1980s.", "no"),
            ("Our store offers free shipping on orders over $50.", "no"),
            ("Battery life is less important if you edit plugged in.", "unsure"),
            ("Check that the GPU supports hardware encoding for your codec.", "yes"),
        ],
    ),
    (
        "When does the museum open on Sundays?",
        [
            ("The museum opens at 10:00 on Sundays.", "yes"),
            ("It closes at 18:00, with last entry at 17:00.", "yes"),
            ("The café on the ground floor serves brunch.", "no"),
        ],
    ),
    (
        "How much vacation do employees get in their first year?",
        [
            ("Employees get 20 days of paid vacation in their first year.", "yes"),
            ("Vacation accrues monthly, at 1.67 days per month.", "yes"),
            ("Unused days carry over up to 5 days.", "unsure"),
            ("The company was founded in 2004 in Berlin.", "no"),
            ("Public holidays are not counted as vacation.", "unsure"),
            ("Request time off in the HR portal.", "unsure"),
            ("Our office has a rooftop garden.", "no"),
            ("Parental leave is covered by a separate policy.", "no"),
        ],
    ),
]
VERDICT_OF = {sentence: verdict for _, sentences in PAIRS for sentence, verdict in sentences}
REASONS = {
    "yes": "answers the question directly",
    "unsure": "related but partial",
    "no": "unrelated to the question",
}


def _tagged(tag: str, text: str) -> list[str]:
    return [json.loads(raw) for _, raw in re.findall(rf"<({tag})>(.*?)</\1>", text, re.DOTALL)]


def single_prompt(question: str, answer: str) -> list[dict[str, str]]:
    """answer_relevancy's one-call request for this pair, as the scorer sends it."""
    rule = AnswerRelevancyRule()
    data = (("question", question), ("answer", answer))
    return render(
        Question("answer_relevancy", rule.instructions, data, RelevancyReply, rule.reply_format), 16_000
    )


def _sentences(answer: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", answer.strip()) if s]


def judge_reply(body: dict[str, Any]) -> str:
    """What a careful judge answers to each of answer_relevancy's prompts."""
    system = body["messages"][0]["content"]
    user = body["messages"][-1]["content"]
    if system.startswith("You split an AI agent's answer into statements"):
        return json.dumps({"statements": _sentences(_tagged("answer", user)[0])})
    if "Judge each numbered statement" in system:
        verdicts = [VERDICT_OF.get(s, "no") for s in _tagged(r"statement_\d+", user)]
        return json.dumps({"verdicts": [{"verdict": v, "reason": REASONS[v]} for v in verdicts]})
    if system.startswith("You explain an evaluation score"):
        return json.dumps(
            {
                "reason": "The answer addresses the question in most statements, but some sentences add "
                "unrelated background that does not help the user."
            }
        )
    statements = [
        {"statement": s, "verdict": VERDICT_OF.get(s, "no"), "reason": REASONS[VERDICT_OF.get(s, "no")]}
        for s in _sentences(_tagged("answer", user)[0])
    ]
    return json.dumps(
        {
            "statements": statements,
            "explanation": "Mostly addresses the question, with some unrelated background.",
        }
    )


def distinct_pair(n: int) -> tuple[str, str]:
    """The n-th question/answer pair, its question made unique so that no judge call is shared
    (identical questions in flight at the same time would share one call)."""
    question, sentences = PAIRS[n % len(PAIRS)]
    return f"{question} (ticket {n})", " ".join(s for s, _ in sentences)


def run_of(index: int, question: str, answer: str) -> AgentRun:
    return AgentRun(trace_id=index + 1, span_id=index + 1, agent_name="bench", input=question, output=answer)


def judge_for(server: JudgeServer, concurrency: int = 8) -> Judge:
    return Judge(
        JudgeConfig(
            model=MODEL,
            api_base=server.url,
            api_key="bench",
            concurrency=concurrency,
            cache_size=0,
            timeout_s=25,
        )
    )


def score_directly(scorer: Any, runs: Sequence[AgentRun]) -> list[Score]:
    import asyncio

    async def all_of() -> list[Score]:
        binding = bind(scorer)
        results = []
        for run in runs:
            result = evaluate(binding, run)
            results.append(result if isinstance(result, Score) else await result)
        return results

    return asyncio.run(all_of())


def cost_table(server: JudgeServer) -> bool:
    runs = [run_of(n, q, " ".join(s for s, _ in sentences)) for n, (q, sentences) in enumerate(PAIRS)]
    expected = [score_verdicts([v for _, v in sentences]) for _, sentences in PAIRS]
    rows: dict[int, tuple[list[Score], int]] = {}
    for steps in (1, 3):
        before = server.calls
        scored = score_directly(
            scorers.answer_relevancy(model=MODEL, steps=steps, judge=judge_for(server)), runs
        )
        rows[steps] = (scored, server.calls - before)
    print(
        f"1. judge cost per score, {len(PAIRS)} pairs of 1-8 sentences (tokens: cl100k, as the server counts)"
    )
    print(f"   {'':<22}{'calls':>7}{'input':>9}{'output':>9}{'total':>9}{'vs Mastra':>11}")
    print(
        f"   {'Mastra (published)':<22}{3:>7}{MASTRA_INPUT:>9}{MASTRA_OUTPUT:>9}"
        f"{MASTRA_INPUT + MASTRA_OUTPUT:>9}{1:>11.2f}"
    )
    totals = {}
    for steps, (scored, calls) in rows.items():
        n = len(scored)
        tokens_in = sum(s.usage.input_tokens for s in scored if s.usage) / n
        tokens_out = sum(s.usage.output_tokens for s in scored if s.usage) / n
        totals[steps] = tokens_in + tokens_out
        ratio = (tokens_in + tokens_out) / (MASTRA_INPUT + MASTRA_OUTPUT)
        label = f"steps={steps}" + (" (default)" if steps == 1 else "")
        print(
            f"   {label:<22}{calls / n:>7.2f}{tokens_in:>9.0f}{tokens_out:>9.0f}{tokens_in + tokens_out:>9.0f}{ratio:>11.2f}"
        )
    print(f"   steps=1 / steps=3 tokens: {totals[1] / totals[3]:.2f}")
    same = [a.value for a in rows[1][0]] == [b.value for b in rows[3][0]] == expected
    print(f"   same score for the same verdicts (steps=1, steps=3, formula): {'yes' if same else 'NO'}")
    for (question, sentences), a, b in zip(PAIRS, rows[1][0], rows[3][0], strict=True):
        print(f"     {len(sentences)} sentences  steps=1 {a.value:<5} steps=3 {b.value:<5}  {question}")
    before = server.calls
    score_directly(scorers.answer_relevancy(model=MODEL, judge=judge_for(server)), [run_of(99, "Hi?", "")])
    print(f"   empty answer: {server.calls - before} judge calls (Mastra: 3)")
    return same


@dataclass
class _Job:
    run: AgentRun
    scores: list[Score]

    def build(self) -> Sequence[AgentRun]:
        return [self.run]

    def finished(self, results: Sequence[ScoredRun]) -> None:
        self.scores.extend(score for _, run_scores in results for score in run_scores)

    def dropped(self, reason: str) -> None:
        raise RuntimeError(f"run dropped: {reason}")


def _serve(latency_s: float, jitter: float, conn: Any) -> None:
    server = JudgeServer(judge_reply, latency_s, jitter).start()
    conn.send(server.url)
    conn.recv()
    server.stop()


@contextmanager
def remote_judge(latency_s: float, jitter: float) -> Iterator[str]:
    """The judge in its own process, as a real one would be: its work does not share our GIL."""
    context = multiprocessing.get_context("spawn")
    here, there = context.Pipe()
    process = context.Process(target=_serve, args=(latency_s, jitter, there), daemon=True)
    process.start()
    try:
        yield here.recv()
    finally:
        here.send("stop")
        process.join(10)


def throughput(
    url: str, steps: int, latency_s: float, concurrency: int, count: int, report: bool = True
) -> float:
    judge = Judge(
        JudgeConfig(
            model=MODEL, api_base=url, api_key="bench", concurrency=concurrency, cache_size=0, timeout_s=25
        )
    )
    scorer = scorers.answer_relevancy(model=MODEL, steps=steps, judge=judge)
    metrics = PipelineMetrics(MeterProvider())
    emission = standard_emission(metrics, tracer_provider=TracerProvider(), logger_provider=LoggerProvider())
    engine = ScoringEngine(
        [bind(scorer)], emission, metrics, max_queue_size=count + 1, max_concurrent_runs=256
    )
    jobs = []
    for n in range(count):
        question, answer = distinct_pair(n)
        jobs.append(_Job(run_of(n, question, answer), []))
    started = time.perf_counter()
    for job in jobs:
        engine.submit(job)
    engine.force_flush(600)
    elapsed = time.perf_counter() - started
    engine.shutdown()
    scored = sum(1 for job in jobs for score in job.scores if score.ok)
    errors = {score.error.type for job in jobs for score in job.scores if score.error}
    achieved = scored / elapsed
    ideal = concurrency / (latency_s * steps)
    if report:
        print(
            f"     steps={steps}: {scored}/{count} scored in {elapsed:.2f}s = {achieved:.1f}/s; "
            f"ideal C/(L x calls) = {ideal:.1f}/s; achieved/ideal = {achieved / ideal:.2f}"
            + (f"  errors: {sorted(errors)}" if errors else "")
        )
    return achieved / ideal


def litellm_alone(url: str, latency_s: float, concurrency: int, count: int) -> float:
    """The baseline: the same judge calls straight through litellm.acompletion, C at a time,
    with no engine, parsing or telemetry. Returns achieved / ideal."""
    import asyncio

    from otel_scorers.scorers.judge import import_litellm

    litellm = import_litellm()

    async def all_calls() -> None:
        slots = asyncio.Semaphore(concurrency)

        async def one(n: int) -> None:
            question, answer = distinct_pair(n)
            async with slots:
                await litellm.acompletion(
                    model=MODEL,
                    api_base=url,
                    api_key="bench",
                    messages=single_prompt(question, answer),
                    timeout=25,
                    max_retries=0,
                )

        await asyncio.gather(*[one(n) for n in range(count)])

    started = time.perf_counter()
    asyncio.run(all_calls())
    return count / (time.perf_counter() - started) / (concurrency / latency_s)


def client_cpu(url: str, calls: int = 100) -> tuple[float, float]:
    """CPU milliseconds per judge call on our side: raw litellm.acompletion (the baseline), then
    Judge.ask (the same call with parsing, validation, usage and cost)."""
    import asyncio

    from otel_scorers.scorers.judge import import_litellm

    litellm = import_litellm()
    judge = Judge(JudgeConfig(model=MODEL, api_base=url, api_key="bench", cache_size=0))
    question, sentences = PAIRS[7]
    rule = AnswerRelevancyRule()
    data = (("question", question), ("answer", " ".join(s for s, _ in sentences)))
    messages = render(
        Question("answer_relevancy", rule.instructions, data, RelevancyReply, rule.reply_format), 16_000
    )

    async def raw() -> None:
        for _ in range(calls):
            await litellm.acompletion(
                model=MODEL, api_base=url, api_key="bench", messages=messages, timeout=20, max_retries=0
            )

    async def ours() -> None:
        for _ in range(calls):
            await judge.ask_messages(messages, RelevancyReply, judge.consultation(MODEL))

    results = []
    for work in (raw, ours, raw, ours):
        started = time.process_time()
        asyncio.run(work())
        results.append((time.process_time() - started) * 1000 / calls)
    return min(results[0], results[2]), min(results[1], results[3])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latency", type=float, nargs="+", default=[0.2, 1.0], help="judge latencies L (s)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32], help="judge concurrencies C")
    parser.add_argument("--jitter", type=float, default=0.3, help="latency varies within L x (1 +- jitter)")
    parser.add_argument("--rounds", type=int, default=10, help="scores per run = C x rounds")
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs per setting")
    parser.add_argument(
        "--catalogue",
        action="store_true",
        help="only the LLM scorer catalogue against Mastra's (bench/judge_catalogue.py)",
    )
    args = parser.parse_args()
    if args.catalogue:
        from bench.judge_catalogue import catalogue_table

        with judge_server(judge_reply) as server:
            catalogue_table(server)
        return
    with judge_server(judge_reply) as server:
        warm_up = scorers.answer_relevancy(model=MODEL, judge=judge_for(server))
        score_directly(warm_up, [run_of(0, "warm", "up.")])
        same = cost_table(server)
    print()
    print(f"2. throughput through the engine; judge latency L +-{args.jitter:.0%}, judge concurrency C")
    fractions = []
    for latency in args.latency:
        with remote_judge(latency, args.jitter) as url:
            throughput(url, 1, latency, args.concurrency[0], 3, report=False)  # warm up the connections
            if latency == args.latency[0]:
                with remote_judge(0.0, 0.0) as instant:
                    raw, ours = client_cpu(instant)
                print(
                    f"   client CPU per judge call: litellm alone {raw:.1f} ms, Judge.ask {ours:.1f} ms "
                    f"(x{ours / raw:.2f}); one core caps judge calls at ~{1000 / ours:.0f}/s"
                )
            for concurrency in args.concurrency:
                print(f"   C={concurrency}, L={latency:g}s")
                count = concurrency * args.rounds
                # alternating rounds, medians: the host's other load moves single runs by 10%
                baselines, ours = [], []
                for _ in range(args.repeats):
                    baselines.append(litellm_alone(url, latency, concurrency, count))
                    ours.append(throughput(url, 1, latency, concurrency, count, report=False))
                baseline, steps_1 = statistics.median(baselines), statistics.median(ours)
                fractions.append(steps_1)
                print(
                    f"     achieved/ideal (C/L), median of {args.repeats}: litellm alone {baseline:.2f}, "
                    f"steps=1 through the engine {steps_1:.2f} (x{steps_1 / baseline:.2f} of litellm alone)"
                )
                throughput(url, 3, latency, concurrency, max(concurrency, count // 3))
    print()
    print(
        f"steps=1 achieved/ideal: min {min(fractions):.2f}, max {max(fractions):.2f}; "
        f"same score for the same verdicts: {'yes' if same else 'NO'}"
    )


if __name__ == "__main__":
    main()
