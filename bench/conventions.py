"""What reading each instrumentation's traces costs, against plain GenAI spans in the same run.

For every framework of the fixture corpus (tests/fixtures/traces), the spans of all its
scenarios are loaded once, then two things are timed in alternating rounds, medians reported:

- detection: `classify` on every span (convention and role), what the run builder pays per span;
- building: `build_runs` on every trace (messages decoded, tool calls matched, fallbacks).

Both are given per span and as a ratio to the `openai-v2` fixtures (the official GenAI
instrumentation: attributes only, the cheapest layout), so a convention whose reading is
disproportionately costly stands out whatever the machine.

    python bench/conventions.py [--rounds 7] [--repeat 20]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from otel_scorers.conventions import classify
from otel_scorers.runs.otlp_files import InputProblem, read_spans
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanRecord

TRACES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "traces"
BASELINE = "openai-v2"


def load() -> dict[str, list[list[SpanRecord]]]:
    """framework -> its traces (each a list of spans)."""
    corpus: dict[str, list[list[SpanRecord]]] = {}
    for directory in sorted(path for path in TRACES.iterdir() if path.is_dir()):
        traces: dict[int, list[SpanRecord]] = defaultdict(list)
        problems: list[InputProblem] = []
        for path in sorted(directory.glob("*.json")):
            if path.name.endswith(".truth.json"):
                continue
            for span in read_spans(path, problems):
                traces[(hash(path.name) << 128) | span.trace_id].append(span)
        if problems:
            raise SystemExit(f"unreadable fixtures: {problems}")
        corpus[directory.name] = list(traces.values())
    return corpus


def per_span_ns(work: Callable[[], object], spans: int, repeat: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(repeat):
        work()
    return (time.perf_counter_ns() - start) / (spans * repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    corpus = load()
    if BASELINE not in corpus:
        raise SystemExit(f"baseline fixtures {BASELINE} not found under {TRACES}")

    detect: dict[str, list[float]] = defaultdict(list)
    build: dict[str, list[float]] = defaultdict(list)
    for _ in range(args.rounds):
        for framework, traces in corpus.items():
            spans = [span for trace in traces for span in trace]

            def classify_all(spans: list[SpanRecord] = spans) -> object:
                return [classify(span) for span in spans]

            def build_all(traces: list[list[SpanRecord]] = traces) -> object:
                return [build_runs(trace) for trace in traces]

            detect[framework].append(per_span_ns(classify_all, len(spans), args.repeat))
            build[framework].append(per_span_ns(build_all, len(spans), args.repeat))

    base_detect = statistics.median(detect[BASELINE])
    base_build = statistics.median(build[BASELINE])
    print(
        f"{'framework':<26}{'spans':>7}{'runs':>6}{'detect ns/span':>16}{'ratio':>7}{'build ns/span':>15}{'ratio':>7}"
    )
    for framework, traces in corpus.items():
        span_count = sum(len(trace) for trace in traces)
        runs = sum(len(build_runs(trace)) for trace in traces)
        d, b = statistics.median(detect[framework]), statistics.median(build[framework])
        print(
            f"{framework:<26}{span_count:>7}{runs:>6}{d:>16.0f}{d / base_detect:>7.2f}{b:>15.0f}{b / base_build:>7.2f}"
        )
    print(f"(ratios against {BASELINE}; medians of {args.rounds} rounds of {args.repeat} passes)")


if __name__ == "__main__":
    main()
