"""The `otel-scorers` command: demo, runs, score, calibrate, validate, serve."""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from otel_scorers.cli import judge_requests
from otel_scorers.cli.backfill import DEFAULT_CONCURRENCY, TelemetryOut
from otel_scorers.cli.conversation_backfill import ConversationBackfill, conversation_score_json
from otel_scorers.cli.html_report import ReportInput, write_html_report
from otel_scorers.cli.report_cases import ReportCases, ScoreWatcher
from otel_scorers.cli.score_baseline import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MARGIN,
    Comparison,
    ScorerSummary,
    summaries,
)
from otel_scorers.cli.score_summary import MAX_NAME_CHARS, STATISTICS, Gate, ScoreSummary, parse_gate
from otel_scorers.config import Config, load_config
from otel_scorers.conventions import use_descriptions
from otel_scorers.conversation_turns import Conversation
from otel_scorers.errors import ConfigError, ListenError
from otel_scorers.human_text import counted, cut, printable
from otel_scorers.install import install_hint
from otel_scorers.keep.keeper import KeepConfig, RunKeeper
from otel_scorers.model import AgentRun, Score, score_fields
from otel_scorers.otlp.endpoint import DEFAULT_PROTOCOL, PROTOCOLS, unreachable
from otel_scorers.runs.otlp_files import InputProblem, Reading, runs_from_files
from otel_scorers.selection.binding import Binding
from otel_scorers.version import __version__


def run_to_json(run: AgentRun) -> dict[str, Any]:
    return {
        "trace_id": run.trace_id_hex,
        "span_id": run.span_id_hex,
        "agent_name": run.agent_name,
        "convention": run.convention,
        "input": run.input,
        "output": run.output,
        "tool_calls": [
            {
                "name": call.name,
                "call_id": call.call_id,
                "arguments": call.arguments,
                "result": call.result,
                "state": call.state,
            }
            for call in run.tool_calls
        ],
        "missing": sorted(run.missing),
        # The tools the model was offered (what tool_args_valid checks against), when declared.
        **(
            {
                "tool_definitions": [
                    {"name": tool.name, "parameters": tool.parameters, "source": tool.source}
                    for tool in run.tool_definitions
                ]
            }
            if run.tool_definitions
            else {}
        ),
        # What no capture setting would have recorded, said only when there is some.
        **({"unrecorded": sorted(run.unrecorded)} if run.unrecorded else {}),
        **(
            {
                "handoffs": [{"from": h.from_agent, "to": h.to_agent} for h in run.handoffs],
                "final_agent": run.final_agent,
            }
            if run.handoffs
            else {}
        ),
    }


def score_to_json(run: AgentRun, score: Score) -> dict[str, Any]:
    return {
        "trace_id": run.trace_id_hex,
        "span_id": run.span_id_hex,
        "agent_name": run.agent_name,
        **score_fields(score),
    }


def _write_line(document: dict[str, Any]) -> None:
    sys.stdout.buffer.write(orjson.dumps(document, default=repr) + b"\n")


def _say(message: str) -> None:
    """A line (or lines) for the person at the terminal, on stderr: input keys, names and trace
    text in it cannot steer the terminal (`human_text.printable`)."""
    print(printable(message, newlines=True), file=sys.stderr)


def _progress(message: str) -> None:
    _say(f"otel-scorers: {message}")


def _report(problems: Sequence[InputProblem]) -> int:
    for problem in problems:
        _say(f"otel-scorers: skipped {problem}")
    return 1 if problems else 0


def _nothing_read(paths: Sequence[Path], reading: Reading) -> int:
    """1, with the reason on stderr, when the files gave no runs; else 0."""
    why = reading.nothing_read(paths)
    if why is None:
        return 0
    _say(f"otel-scorers: nothing to work on: {why}")
    return 1


def cmd_runs(args: argparse.Namespace) -> int:
    if args.config is not None:  # its `conventions:` describe instrumentations to read
        use_descriptions(load_config(args.config, scoring=False).conventions)
    problems: list[InputProblem] = []
    if args.explain:
        return _explain(args.files, problems)
    reading = Reading()
    for run in runs_from_files(args.files, problems, _progress, reading):
        _write_line(run_to_json(run))
    return max(_report(problems), _nothing_read(args.files, reading))


def _explain(files: Sequence[Path], problems: list[InputProblem]) -> int:
    from otel_scorers.runs.explain import explain_files, explanation_lines

    traces = 0
    for explanation in explain_files(files, problems):
        traces += 1
        for line in explanation_lines(explanation):
            print(printable(line))  # span names and attributes, written for a person
    code = _report(problems)
    if not traces:
        _say("otel-scorers: no spans read")
        return max(code, 1)
    return code


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


def _confidence(text: str) -> float:
    value = _share(text)
    if not 0.5 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be at least 0.5 and below 1, got {text}")
    return value


def cmd_score(args: argparse.Namespace) -> int:
    from otel_scorers.cli.junit import write_junit_xml
    from otel_scorers.cli.score_baseline import read_summary

    config = load_config(args.config)
    use_descriptions(config.conventions)
    bindings = config.bindings()
    names = [binding.name for binding in bindings]
    conversations = _conversation_backfill(config)
    conversation_names = (
        [binding.name for binding in conversations.settings.bindings] if conversations is not None else []
    )
    unknown = _unknown_gate(args, names, conversation_names)
    if unknown is not None:
        _say(unknown)
        return 2
    baseline: dict[str, ScorerSummary] | None = None
    if args.baseline is not None:
        try:
            baseline = read_summary(args.baseline)
        except ValueError as exc:
            _say(f"otel-scorers: {exc}")
            return 2
    problems: list[InputProblem] = []
    out: TelemetryOut | None = None
    if args.otlp_endpoint:
        problem = unreachable(args.otlp_endpoint, args.otlp_protocol)
        if problem is not None:
            _say(f"otel-scorers: nothing scored: {problem}")
            return 1
        out = TelemetryOut(args.otlp_endpoint, args.otlp_protocol)
    summary = ScoreSummary(names, args.fail_under, conversation_names)
    cases = ReportCases() if args.html is not None else None
    reading = Reading()
    keeper = _keeper(args)
    watchers: list[ScoreWatcher] = [summary, *(w for w in (cases, keeper) if w is not None)]
    elapsed = _score_all(args, bindings, conversations, summary, watchers, out, reading, problems)
    if out is not None:
        _say(f"otel-scorers: {out.close()}")
    if keeper is not None:
        _say(f"otel-scorers: kept {counted(keeper.kept, 'run')} in {keeper.config.path}")
    nothing = _nothing_read(args.files, reading)
    code = max(_report(problems), nothing)
    if not nothing:  # after "nothing to work on", a table of zeros would say nothing more
        _say(f"otel-scorers: {summary.headline()} in {elapsed:.1f}s\n{summary.table()}")
        _say_pacing(bindings, summary)
    comparisons = _baseline_gate(args, summary, bindings, baseline)
    if args.junit_xml is not None:
        write_junit_xml(args.junit_xml, summary, elapsed, comparisons)
        _say(f"otel-scorers: wrote the JUnit XML report to {args.junit_xml}")
    if args.html is not None and cases is not None:
        report = ReportInput(
            summary,
            summaries(summary, bindings),
            comparisons,
            cases,
            args.confidence,
            config.report.trace_url,
            None if args.baseline is None else str(args.baseline),
        )
        write_html_report(args.html, report)
        _say(f"otel-scorers: wrote the HTML report to {args.html}")
    return _gates_code(summary, comparisons, code)


def _keeper(args: argparse.Namespace) -> RunKeeper | None:
    """What keeps the runs `--keep-failing` asks for, or None."""
    if args.keep_failing is None:
        return None
    config = KeepConfig(
        path=args.keep_failing, failing=args.keep_scorer, sample=args.keep_sample, max_bytes=None
    )
    args.keep_failing.unlink(missing_ok=True)  # a new test set, as the other outputs are new files
    return RunKeeper(config)


def _unknown_gate(
    args: argparse.Namespace, names: Sequence[str], conversation_names: Sequence[str]
) -> str | None:
    """What is wrong with a `--fail-under` gate that names no scorer of the config, or None:
    checked before any scoring, since such a gate could never pass."""
    known = {*names, *conversation_names}
    strangers = [name for name in args.keep_scorer if name not in known]
    if strangers:
        return f"otel-scorers: --keep-scorer names no scorer of {args.config}: {', '.join(strangers)}"
    unknown = [gate.scorer for gate in args.fail_under if gate.scorer not in known]
    for scorer in unknown:
        head, _, statistic = scorer.rpartition(":")
        if head in known:  # `X:median=...`: a scorer of the config, a statistic there is not
            return (
                f"otel-scorers: --fail-under {scorer}: unknown statistic {statistic!r} "
                f"(the statistics: {', '.join(STATISTICS)})"
            )
    if unknown:
        return (
            f"otel-scorers: --fail-under names no scorer of {args.config}: {', '.join(unknown)} "
            f"(its scorers: {', '.join([*names, *conversation_names])})"
        )
    return None


def _score_all(
    args: argparse.Namespace,
    bindings: Sequence[Binding],
    conversations: ConversationBackfill | None,
    summary: ScoreSummary,
    watchers: Sequence[ScoreWatcher],
    out: TelemetryOut | None,
    reading: Reading,
    problems: list[InputProblem],
) -> float:
    """Score the files' runs, then their conversations: each score a JSON line on stdout, to
    each of `watchers` (the summary, the report's cases) and, given `out`, into telemetry. The
    seconds it took."""
    from otel_scorers.cli.backfill import Progress, judge_concurrency, score_runs

    def scored(run: AgentRun, scores: Sequence[Score]) -> None:
        for watcher in watchers:
            watcher.add_run(run, scores)
        if out is not None:
            out.emit(run, scores)

    concurrency = args.concurrency or judge_concurrency(bindings)
    runs = runs_from_files(args.files, problems, _progress, reading)
    if conversations is not None:  # grouped across every file, scored at the end of the input
        runs = conversations.runs(runs)
    progress = Progress()
    asyncio.run(
        score_runs(
            bindings,
            runs,
            lambda run, score: _write_line(score_to_json(run, score)),
            concurrency,
            scored,
            progress,
            summary.not_admitted,
        )
    )
    if conversations is not None:

        def conversation_scored(conversation: Conversation, scores: Sequence[Score]) -> None:
            for watcher in watchers:
                watcher.add_conversation(conversation, scores)
            if out is not None:
                out.emit_conversation(conversation, scores)

        asyncio.run(
            conversations.finish(
                lambda conversation, score: _write_line(conversation_score_json(conversation, score)),
                conversation_scored,
                concurrency,
            )
        )
    return time.monotonic() - progress.started


def _say_pacing(bindings: Sequence[Binding], summary: ScoreSummary) -> None:
    """What pacing did with a file is not obvious: say it for each budget-paced binding."""
    for binding in bindings:
        if binding.paced is not None:
            policy, tally = binding.paced.policy, summary.tallies[binding.name]
            _say(
                f"otel-scorers: {binding.name} is budget-paced ({policy.budget_key}: {policy.per_hour:g}), "
                f"paced by the traces' own times: it judged {counted(tally.scored + tally.errors, 'run')} "
                f"and sampled out {tally.not_admitted['sampled_out']}"
            )


def _gates_code(summary: ScoreSummary, comparisons: Sequence[Comparison], code: int) -> int:
    """The exit code once the gates are judged: 1 for a baseline comparison that failed, a
    scorer that measured nothing or a `--fail-under` gate that failed (each said on stderr);
    else `code`."""
    if any(comparison.failed for comparison in comparisons):
        code = 1
    for name in summary.only_errors():
        _say(
            f"otel-scorers: {cut(name, MAX_NAME_CHARS)} measured nothing: {summary.tallies[name].failed_text}"
        )
        code = 1
    failed = [verdict for verdict in summary.gate_results() if not verdict.passed]
    for verdict in failed:
        _say(f"otel-scorers: gate failed: {cut(verdict.gate.scorer, MAX_NAME_CHARS)} {verdict.measured}")
    return 1 if failed else code


def _baseline_gate(
    args: argparse.Namespace,
    summary: ScoreSummary,
    bindings: Sequence[Binding],
    baseline: Mapping[str, ScorerSummary] | None,
) -> list[Comparison]:
    """`--summary-out` written and, with `--baseline`, each scorer compared and the comparisons
    printed (`score_baseline`)."""
    from otel_scorers.cli.score_baseline import (
        compare,
        comparison_table,
        summaries,
        summary_document,
        write_summary,
    )

    current = summaries(summary, bindings)
    if args.summary_out is not None:
        write_summary(args.summary_out, summary_document(summary, current, args.confidence))
        _say(f"otel-scorers: wrote the summary to {args.summary_out}")
    if baseline is None:
        return []
    comparisons = compare(current, baseline, args.baseline_margin, args.confidence)
    _say(f"otel-scorers: compared with {args.baseline}\n{comparison_table(comparisons)}")
    for comparison in comparisons:
        if comparison.failed:
            _say(f"otel-scorers: regression: {comparison.scorer} {comparison.text()}")
    return comparisons


def cmd_calibrate(args: argparse.Namespace) -> int:
    from otel_scorers.cli.backfill import judge_concurrency, score_runs
    from otel_scorers.labels.agreement import Agreement
    from otel_scorers.labels.agreement_output import judge_scores
    from otel_scorers.labels.calibration import calibration_bindings, junit, report, table, unshared_labels
    from otel_scorers.labels.label_records import read_labels

    config = load_config(args.config)
    try:
        labels = [label for path in args.labels for label in read_labels(path)]
    except ValueError as exc:
        print(f"otel-scorers: {exc}", file=sys.stderr)
        return 2
    bindings = config.bindings()
    chosen = calibration_bindings(bindings, labels)
    names = {binding.name for binding in bindings}
    unknown = sorted({label.scorer for label in labels} - names)
    if unknown:
        print(
            f"otel-scorers: labels name no scorer of {args.config}: {', '.join(unknown)} (counted as unpaired)",
            file=sys.stderr,
        )
    agreement = Agreement(wait_s=math.inf, max_pending=max(1, len(labels)) + 1_000_000)
    agreement.add_labels(labels)
    problems: list[InputProblem] = []
    reading = Reading()
    runs = runs_from_files(args.files, problems, _progress, reading)
    asyncio.run(
        score_runs(
            chosen,
            runs,
            lambda run, score: None,
            args.concurrency or judge_concurrency(chosen),
            lambda run, scores: agreement.observe(judge_scores(run, scores)),
        )
    )
    agreement.close()
    documents = report(agreement)
    for document in documents:
        _write_line(document)
    print(f"otel-scorers: {counted(len(labels), 'label')}\n{table(documents)}", file=sys.stderr)
    if args.junit_xml is not None:
        args.junit_xml.write_bytes(junit(documents, args.min_kappa))
        print(f"otel-scorers: wrote the JUnit XML report to {args.junit_xml}", file=sys.stderr)
    code = max(_report(problems), _nothing_read(args.files, reading))
    unshared = [document["scorer"] for document in documents if unshared_labels(document)]
    for document in documents:
        warning = unshared_labels(document)
        if warning is not None:
            _say(f"otel-scorers: warning: {warning}")
    low = [
        document["scorer"]
        for document in documents
        if args.min_kappa is not None
        and (document.get("kappa") is None or document["kappa"] < args.min_kappa)
    ]
    for scorer in low:
        print(f"otel-scorers: gate failed: {scorer} kappa below {args.min_kappa:g}", file=sys.stderr)
    if args.min_kappa is not None and unshared:
        _say(f"otel-scorers: gate failed: {', '.join(unshared)}: no label word shared with people's")
        return 1
    return 1 if low else code


def _conversation_backfill(config: Config) -> ConversationBackfill | None:
    if config.conversations is None or not config.conversations.scorers:
        return None
    settings = config.conversation_settings()
    assert settings is not None
    return ConversationBackfill(settings)


def cmd_validate(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    names = [binding.name for binding in config.bindings()]
    parts = (
        [f"{counted(len(names), 'scorer')}: {', '.join(names)}"]
        if names or config.conversations is None
        else []
    )
    conversations = _conversation_backfill(config)
    if conversations is not None:
        each = [binding.name for binding in conversations.settings.bindings]
        parts.append(f"{counted(len(each), 'conversation scorer')}: {', '.join(each)}")
    print(printable(f"{args.config}: valid ({'; '.join(parts)})"))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from otel_scorers.demos.live_demo import run_demo

    return run_demo(
        otlp_endpoint=args.otlp_endpoint,
        protocol=args.otlp_protocol,
        config_path=args.config,
        traces_out=args.traces_out,
    )


def cmd_fake_judge(args: argparse.Namespace) -> int:
    from otel_scorers.demos.fake_judge import serve

    return serve(args.host, args.port)


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from otel_scorers.sidecar import run
        from otel_scorers.sidecar.logs import setup_logging
    except ImportError as exc:
        _say(
            f"otel-scorers: serve needs the sidecar extra ({install_hint('sidecar')}, or make sidecar): {exc}"
        )
        return 2
    setup_logging()
    return run(args.config, console=args.console)


class _Parser(argparse.ArgumentParser):
    """No abbreviated options: `serve --consol` is an error, not `--console` (an abbreviation
    would also change meaning the day an option with the same prefix is added)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)


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
        type=int,
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
        "--min-kappa", type=float, default=None, metavar="K", help="exit 1 when a scorer's kappa is below K"
    )
    calibrate.add_argument(
        "--junit-xml",
        type=Path,
        default=None,
        metavar="PATH",
        help="also write a JUnit XML report: a test case per scorer",
    )
    calibrate.add_argument("--concurrency", type=int, default=None, help="runs judged at once")
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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args)
    except ConfigError as exc:
        _say(f"otel-scorers: invalid config: {exc}")
        return 2
    except ListenError as exc:
        _say(f"otel-scorers: {exc}")
        return 1
    except BrokenPipeError:
        return 0
    return code


if __name__ == "__main__":
    sys.exit(main())
