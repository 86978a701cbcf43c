"""The command line's arguments: one subcommand per command, each with its handler."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from otel_scorers.cli import judge_requests
from otel_scorers.cli.backfill import DEFAULT_CONCURRENCY
from otel_scorers.cli.calibrate_command import cmd_calibrate
from otel_scorers.cli.runs_command import cmd_runs
from otel_scorers.cli.score_baseline import DEFAULT_CONFIDENCE, DEFAULT_MARGIN
from otel_scorers.cli.score_command import cmd_score
from otel_scorers.cli.score_summary import Gate, parse_gate
from otel_scorers.cli.start_commands import cmd_demo, cmd_fake_judge, cmd_serve
from otel_scorers.cli.validate_command import cmd_validate
from otel_scorers.install import install_hint
from otel_scorers.otlp.endpoint import DEFAULT_PROTOCOL, PROTOCOLS
from otel_scorers.setting_bounds import MAX_COUNT
from otel_scorers.version import __version__


def _gate(text: str) -> Gate:
    try:
        return parse_gate(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


def _concurrency(text: str) -> int:
    """Runs scored at once: a whole number from 1 (0 and below were a traceback, or the default)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text[:40]!r}") from None
    if not 1 <= value <= MAX_COUNT:
        raise argparse.ArgumentTypeError(f"must be at least 1 and at most {MAX_COUNT:,}, got {text}")
    return value


def _confidence(text: str) -> float:
    value = _share(text)
    if not 0.5 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be at least 0.5 and below 1, got {text}")
    return value


class _Parser(argparse.ArgumentParser):
    """No abbreviated options: `serve --consol` is an error, not `--console` (an abbreviation
    would also change meaning the day an option with the same prefix is added)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)


def _kappa(text: str) -> float:
    """Cohen's kappa lies in [-1, 1]; NaN would pass every judge (no comparison with it holds)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and -1.0 <= value <= 1.0):
        raise argparse.ArgumentTypeError(f"must be between -1 and 1 (kappa's range), got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="otel-scorers", description="Live quality scoring for AI agents on OpenTelemetry.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(
        dest="command",
        required=True,
        metavar="COMMAND",
        help="one of these (COMMAND --help for its options):",
        parser_class=_Parser,
    )
    config_help = "the YAML configuration file (scorers, and the processor, judge and sidecar sections)"
    files_help = "OTLP/JSON ExportTraceServiceRequest files, one per file or one per line, optionally gzipped"

    demo = commands.add_parser(
        "demo",
        help="run a bundled example agent and score it",
        description="Run a bundled example agent, score it and print the scores.",
    )
    demo.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        help="also send traces, events and metrics to this OTLP endpoint (e.g. http://localhost:4317)",
    )
    demo.add_argument(
        "--otlp-protocol",
        choices=PROTOCOLS,
        default=DEFAULT_PROTOCOL,
        help="the protocol of --otlp-endpoint (default: %(default)s)",
    )
    demo.add_argument(
        "-c", "--config", type=Path, help="score with this configuration file instead of the built-in one"
    )
    demo.add_argument(
        "--traces-out",
        type=Path,
        metavar="PATH",
        help="also write the example agent's traces to PATH as OTLP/JSON, for `runs` and `score`",
    )
    demo.set_defaults(handler=cmd_demo)

    runs = commands.add_parser(
        "runs",
        help="print the agent runs rebuilt from OTLP/JSON files, one JSON line each",
        description="Print the agent runs rebuilt from OTLP/JSON files, one JSON line each.",
    )
    runs.add_argument("files", nargs="+", type=Path, metavar="FILE", help=files_help)
    runs.add_argument(
        "-c", "--config", type=Path, help="read with the instrumentations its conventions section describes"
    )
    runs.add_argument(
        "--explain",
        action="store_true",
        help="instead of the runs, show per trace which reader claimed which span, what it read from "
        "where, what is missing, and why no run was found",
    )
    runs.set_defaults(handler=cmd_runs)

    score = commands.add_parser(
        "score",
        aliases=["backfill"],
        help="score (backfill) the runs in OTLP/JSON files, one JSON line per score; gate CI on them",
        description=(
            "Score the runs in OTLP/JSON trace files (recorded test traffic, or a backfill of "
            "yesterday's traces) with a configuration's scorers: one JSON line per score on stdout, "
            "and a summary per scorer (runs scored, mean, labels, skipped, errors) on stderr. "
            "Exit code 1 when an input could not be read or held no agent run, when a scorer failed "
            "on every run it tried (skipped runs aside), or when a --fail-under gate is not met; 2 for a bad configuration or gate."
        ),
    )
    score.add_argument("files", nargs="+", type=Path, metavar="FILE", help=files_help)
    score.add_argument("-c", "--config", type=Path, required=True, help=config_help)
    score.add_argument(
        "--fail-under",
        type=_gate,
        action="append",
        default=[],
        metavar="SCORER=THRESHOLD",
        help=(
            "exit 1 when SCORER falls short; repeatable. SCORER=0.8 (or SCORER:mean=0.8) gates the "
            "mean value of its scored runs, SCORER:pass_rate=0.9 the share of its pass/fail labels "
            "that are pass; skipped runs and errors count in neither, and a gated scorer with "
            "nothing to measure fails"
        ),
    )
    score.add_argument(
        "--summary-out",
        type=Path,
        default=None,
        metavar="PATH",
        help="write the summary per scorer (runs, mean, pass rate, evaluator version) as JSON to PATH, "
        "the baseline of a later --baseline",
    )
    score.add_argument(
        "--baseline",
        type=Path,
        default=None,
        metavar="PATH",
        help="compare each scorer with a summary a previous run wrote (--summary-out): exit 1 when one is "
        "worse by more than --baseline-margin and beyond noise at --confidence; scorers whose evaluator "
        "version changed are reported, not compared",
    )
    score.add_argument(
        "--baseline-margin",
        type=_share,
        default=DEFAULT_MARGIN,
        metavar="M",
        help="how much worse than the baseline a scorer may be before it can fail (default %(default)s)",
    )
    score.add_argument(
        "--confidence",
        type=_confidence,
        default=DEFAULT_CONFIDENCE,
        metavar="C",
        help="the confidence level of the intervals that tell a regression from noise (default %(default)s)",
    )
    score.add_argument(
        "--junit-xml",
        type=Path,
        default=None,
        metavar="PATH",
        help="also write a JUnit XML report to PATH: one test case per scorer, failed when its gate is not met",
    )
    score.add_argument(
        "--html",
        type=Path,
        default=None,
        metavar="PATH",
        help="also write a self-contained HTML report to PATH: each scorer's pass rate or mean with its "
        "interval (and change against --baseline), the failing runs and conversations, linked to their "
        "traces by the config's report.trace_url",
    )
    score.add_argument(
        "--keep-failing",
        type=Path,
        default=None,
        metavar="PATH",
        help="write the trace of each run a scorer failed (label fail) to PATH, an OTLP/JSON trace "
        "file this command reads: the failing runs kept as a test set",
    )
    score.add_argument(
        "--keep-scorer",
        action="append",
        default=[],
        metavar="SCORER",
        help="with --keep-failing: only the runs this scorer failed (repeatable; default: any scorer)",
    )
    score.add_argument(
        "--keep-sample",
        type=_share,
        default=0.0,
        metavar="SHARE",
        help="with --keep-failing: also keep this share of all scored runs (0 to 1, by trace id)",
    )
    score.add_argument(
        "--concurrency",
        type=_concurrency,
        default=None,
        help=f"runs scored at once (default: the judge's concurrency, else {DEFAULT_CONCURRENCY})",
    )
    score.add_argument(
        "--otlp-endpoint",
        default=None,
        help="also send the scores as telemetry (evaluation spans, events, metrics) to this OTLP endpoint",
    )
    score.add_argument(
        "--otlp-protocol",
        choices=PROTOCOLS,
        default=DEFAULT_PROTOCOL,
        help="the OTLP protocol of --otlp-endpoint (default %(default)s)",
    )
    score.set_defaults(handler=cmd_score)

    calibrate = commands.add_parser(
        "calibrate",
        help="how often the judge agrees with people: labels joined with the judge's scores of the same runs",
        description=(
            "Judge every run of the trace files with each scorer the labels name (sampling and rate "
            "limits lifted), join the labels with those scores, and report per scorer and evaluator "
            "version: pairs, agreement, Cohen's kappa with the base rates, mean absolute difference "
            "and Spearman correlation for values, the judge-only and the label-corrected estimates, "
            "and the disagreements. One JSON line per scorer on stdout, the table on stderr. Exit "
            "code 1 when an input could not be read or --min-kappa is not met; 2 for a bad "
            "configuration or labels file."
        ),
    )
    calibrate.add_argument("files", nargs="+", type=Path, metavar="FILE", help=files_help)
    calibrate.add_argument("-c", "--config", type=Path, required=True, help=config_help)
    calibrate.add_argument(
        "--labels",
        type=Path,
        action="append",
        required=True,
        metavar="PATH",
        help="a JSON-lines file of labels (scorer, trace_id, span_id or conversation_id, value, label, reviewer, comment); repeatable",
    )
    calibrate.add_argument(
        "--min-kappa", type=_kappa, default=None, metavar="K", help="exit 1 when a scorer's kappa is below K"
    )
    calibrate.add_argument(
        "--junit-xml",
        type=Path,
        default=None,
        metavar="PATH",
        help="also write a JUnit XML report: a test case per scorer",
    )
    calibrate.add_argument("--concurrency", type=_concurrency, default=None, help="runs judged at once")
    calibrate.set_defaults(handler=cmd_calibrate)

    judge_requests.add_parser(commands, files_help)

    fake_judge = commands.add_parser(
        "fake-judge",
        help="a keyless local judge (OpenAI-compatible) with made-up valid replies, to try the judged scorers",
        description=(
            "Serve an OpenAI-compatible chat-completions endpoint that answers every judge request "
            "with a made-up reply valid under the schema it carries (docs/judge-replies.md): no key, "
            "no model, verdicts that mean nothing. Prints the judge: section that points at it."
        ),
    )
    fake_judge.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default %(default)s)"
    )
    fake_judge.add_argument(
        "--port",
        type=int,
        default=8000,
        help="the port to listen on; 0 picks a free one (default %(default)s)",
    )
    fake_judge.set_defaults(handler=cmd_fake_judge)

    validate = commands.add_parser(
        "validate",
        help="check a configuration file and report every error",
        description="Check a configuration file: report every error, each with the path of its key.",
    )
    validate.add_argument("-c", "--config", type=Path, required=True, help=config_help)
    validate.set_defaults(handler=cmd_validate)

    serve = commands.add_parser(
        "serve",
        help="the sidecar: receive OTLP traces from a collector, score them, export the scores",
        description=(
            "The sidecar: receive OTLP traces from a collector, score them, export the scores. "
            f"Needs the sidecar extra: {install_hint('sidecar')} (or make sidecar)."
        ),
    )
    serve.add_argument(
        "-c",
        "--config",
        type=Path,
        required=True,
        help="the YAML configuration file, with its sidecar section",
    )
    serve.add_argument(
        "--console",
        action="store_true",
        help=(
            "print one line per score on standard output (trace, run span, agent, scorer, value, label, "
            "reason), as sidecar.console: true does; with no OTLP endpoint configured (sidecar.export."
            "endpoint, OTEL_EXPORTER_OTLP_ENDPOINT) the scores then go there only"
        ),
    )
    serve.set_defaults(handler=cmd_serve)
    return parser
