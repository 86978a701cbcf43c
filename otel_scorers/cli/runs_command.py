"""`otel-scorers runs`: the runs read from trace files, as JSON lines, or `--explain`ed."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from otel_scorers.cli.output import nothing_read, progress, report_problems, run_to_json, say, write_line
from otel_scorers.config import load_config
from otel_scorers.conventions import use_descriptions
from otel_scorers.human_text import printable
from otel_scorers.runs.otlp_files import InputProblem, Reading, runs_from_files


def cmd_runs(args: argparse.Namespace) -> int:
    if args.config is not None:  # its `conventions:` describe instrumentations to read
        use_descriptions(load_config(args.config, scoring=False).conventions)
    problems: list[InputProblem] = []
    if args.explain:
        return _explain(args.files, problems)
    reading = Reading()
    for run in runs_from_files(args.files, problems, progress, reading):
        write_line(run_to_json(run))
    return max(report_problems(problems), nothing_read(args.files, reading))


def _explain(files: Sequence[Path], problems: list[InputProblem]) -> int:
    from otel_scorers.runs.explain import explain_files, explanation_lines

    traces = 0
    for explanation in explain_files(files, problems):
        traces += 1
        for line in explanation_lines(explanation):
            print(printable(line))  # span names and attributes, written for a person
    code = report_problems(problems)
    if not traces:
        say("otel-scorers: no spans read")
        return max(code, 1)
    return code
