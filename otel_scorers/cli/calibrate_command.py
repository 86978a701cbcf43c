"""`otel-scorers calibrate`: the judge's scores of labelled runs against the labels, a report and
its gate."""

from __future__ import annotations

import argparse
import asyncio
import math
from collections.abc import Sequence
from typing import Any

from otel_scorers.cli.output import nothing_read, progress, report_problems, say, write_line
from otel_scorers.config import load_config
from otel_scorers.human_text import counted, printable
from otel_scorers.labels.label_ranges import scoring_ranges
from otel_scorers.runs.otlp_files import InputProblem, Reading, runs_from_files


def cmd_calibrate(args: argparse.Namespace) -> int:
    from otel_scorers.cli.backfill import judge_concurrency, score_runs
    from otel_scorers.labels.agreement import Agreement
    from otel_scorers.labels.agreement_output import AgreementOutput
    from otel_scorers.labels.calibration import calibration_bindings, junit, report, table
    from otel_scorers.labels.label_records import read_labels

    config = load_config(args.config)
    try:
        labels = [label for path in args.labels for label in read_labels(path)]
    except ValueError as exc:
        say(f"otel-scorers: {exc}")
        return 2
    bindings = config.scoring().bindings
    chosen = calibration_bindings(bindings, labels)
    names = {binding.name for binding in bindings}
    unknown = sorted({label.scorer for label in labels} - names)
    if unknown:
        say(
            f"otel-scorers: labels name no scorer of {args.config}: {', '.join(unknown)} (counted as unpaired)"
        )
    agreement = Agreement(wait_s=math.inf, max_pending=max(1, len(labels)) + 1_000_000)
    agreement.expect(scoring_ranges(bindings))
    admitted = agreement.add_labels(labels)
    if admitted.refused:
        say(
            f"otel-scorers: {counted(admitted.refused, 'label')} refused, the first: {printable(admitted.problem)}"
        )
    problems: list[InputProblem] = []
    reading = Reading()
    runs = runs_from_files(args.files, problems, progress, reading)
    asyncio.run(
        score_runs(
            chosen,
            runs,
            lambda run, score: None,
            args.concurrency or judge_concurrency(chosen),
            AgreementOutput(agreement).emit,
        )
    )
    agreement.close()
    documents = report(agreement)
    for document in documents:
        write_line(document)
    say(f"otel-scorers: {counted(len(labels), 'label')}\n{table(documents)}")
    if args.junit_xml is not None:
        args.junit_xml.write_bytes(junit(documents, args.min_kappa))
        say(f"otel-scorers: wrote the JUnit XML report to {args.junit_xml}")
    code = max(report_problems(problems), nothing_read(args.files, reading))
    unshared = _unshared_label_words(documents)  # warned of with or without a gate
    return 1 if _gate_failed(documents, unshared, args.min_kappa) else code


def _gate_failed(documents: list[dict[str, Any]], unshared: list[str], min_kappa: float | None) -> bool:
    """Whether `--min-kappa`'s gate fails (saying why): a scorer's kappa below it, or `unshared`,
    scorers whose judge and people share no label word."""
    if min_kappa is None:
        return False
    low = [
        document["scorer"]
        for document in documents
        if document.get("kappa") is None or document["kappa"] < min_kappa
    ]
    for scorer in low:
        say(f"otel-scorers: gate failed: {scorer} kappa below {min_kappa:g}")
    if unshared:
        say(f"otel-scorers: gate failed: {', '.join(unshared)}: no label word shared with people's")
    return bool(low or unshared)


def _unshared_label_words(documents: Sequence[dict[str, Any]]) -> list[str]:
    """The scorers whose judge and people share no label word, each warned of on stderr."""
    from otel_scorers.labels.calibration import unshared_labels

    found = []
    for document in documents:
        warning = unshared_labels(document)
        if warning is not None:
            say(f"otel-scorers: warning: {warning}")
            found.append(document["scorer"])
    return found
