"""What masking private text costs per judged run: the judged texts of a run (a question, an
answer and three tool results) masked with every kind on, against the same texts not masked (the
baseline is a copy of the blocks, what building the task costs anyway). Two sizes: a short run
(about 1,000 characters in all) and a long one (about 20,000), each with a few private items.

    python bench/redaction.py [--runs 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import time

from otel_scorers.scorers.judge.masking import Masker, RedactConfig

SENTENCE = (
    "The weather in Paris is sunny and 21 degrees today, with a light breeze from the west; "
    "the Louvre is closed on Tuesdays and metro tickets cost 2.15 EUR. "
)
PRIVATE = "Write to alice@example.com or call +33 1 42 68 53 00 about booking 4111 1111 1111 1111. "


def blocks(chars: int) -> tuple[tuple[str, str], ...]:
    body = (SENTENCE * (chars // (5 * len(SENTENCE)) + 1))[: chars // 5]
    return (
        ("question", "What is the weather in Paris? " + PRIVATE),
        ("answer", body + PRIVATE),
        ("context_1", body),
        ("context_2", body + PRIVATE),
        ("context_3", body),
    )


def per_run_us(data: tuple[tuple[str, str], ...], runs: int, config: RedactConfig | None) -> float:
    started = time.perf_counter()
    for _ in range(runs):
        if config is None:
            tuple((tag, text) for tag, text in data)
        else:
            Masker(config).mask_blocks(data)
    return (time.perf_counter() - started) / runs * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    config = RedactConfig()
    for chars in (1_000, 20_000):
        data = blocks(chars)
        size = sum(len(text) for _, text in data)
        best_on = min(per_run_us(data, args.runs, config) for _ in range(args.rounds))
        best_off = min(per_run_us(data, args.runs, None) for _ in range(args.rounds))
        print(f"{size:>6} characters: masked {best_on:8.1f} µs per run, not masked {best_off:6.2f} µs")


if __name__ == "__main__":
    main()
