"""`otel-scorers judge-requests -c CONFIG FILE...`: exactly what the judge would be sent for the
runs of trace files, without sending it. Each run is scored as `score` scores it (sampling,
filters and `redact:` as configured), with a judge that writes its requests down
(`scorers.judge.dry_run`) instead of calling the model: one JSON line per request on stdout,
with the run it is about; the other scorers' scores are not shown."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from otel_scorers.config import load_config
from otel_scorers.conventions import use_descriptions
from otel_scorers.human_text import counted, printable
from otel_scorers.model import AgentRun, Score
from otel_scorers.pipeline.judge_instruments import judges_of
from otel_scorers.runs.otlp_files import InputProblem, Reading, runs_from_files
from otel_scorers.scorers.judge.dry_run import RequestRecorder


def _say(message: str) -> None:
    print(printable(f"otel-scorers: {message}", newlines=True), file=sys.stderr)


def cmd_judge_requests(args: argparse.Namespace) -> int:
    from otel_scorers.cli.backfill import score_runs

    config = load_config(args.config)
    use_descriptions(config.conventions)
    bindings = config.scoring().bindings
    recorders = []
    for judge in judges_of(binding.scorer for binding in bindings):  # one, unless scorers bring their own
        judge.provider = recorder = RequestRecorder(judge.config, judge.spend)
        recorders.append(recorder)
    problems: list[InputProblem] = []
    reading = Reading()
    written = 0

    def scored(run: AgentRun, scores: Sequence[Score]) -> None:
        nonlocal written
        for recorded in (taken for recorder in recorders for taken in recorder.taken()):
            line = {
                "trace_id": run.trace_id_hex,
                "span_id": run.span_id_hex,
                "agent_name": run.agent_name,
                "reply": recorded.name,
                "request": recorded.request,
            }
            sys.stdout.buffer.write(orjson.dumps(line, default=repr) + b"\n")
            written += 1

    runs = runs_from_files(args.files, problems, None, reading)
    # one run at a time: each request is written with the run it is about
    asyncio.run(score_runs(bindings, runs, lambda run, score: None, 1, scored))
    for problem in problems:
        _say(f"skipped {problem}")
    _say(f"{counted(written, 'judge request')} for {counted(reading.runs, 'run')}, none sent")
    return 1 if problems else 0


def add_parser(commands: argparse._SubParsersAction[Any], files_help: str) -> None:
    parser = commands.add_parser(
        "judge-requests",
        help="print the requests the judge would be sent for the runs of trace files, sending none",
        description=(
            "Score the runs of OTLP/JSON trace files as score does, with a judge that writes each "
            "request down instead of sending it: one JSON line per request on stdout (the run's "
            "trace and span ids, the reply it asks for, and the request as litellm is given it: "
            "model, messages after redaction, response format, token bound; the API key shown as "
            "<api key>). A scorer that asks in steps shows its first request."
        ),
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help=files_help)
    parser.add_argument("-c", "--config", type=Path, required=True, help="the YAML configuration file")
    parser.set_defaults(handler=cmd_judge_requests)
