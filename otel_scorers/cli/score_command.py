"""`otel-scorers score`: runs and conversations read from trace files scored, a summary, the
CI gates (thresholds, a baseline) and their exit code."""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Mapping, Sequence

from otel_scorers.cli.backfill import TelemetryOut
from otel_scorers.cli.conversation_backfill import ConversationBackfill, conversation_score_json
from otel_scorers.cli.output import nothing_read, progress, report_problems, say, score_to_json, write_line
from otel_scorers.cli.report_cases import ReportCases, ScoreWatcher
from otel_scorers.cli.score_baseline import Comparison, ScorerSummary
from otel_scorers.cli.score_summary import MAX_NAME_CHARS, STATISTICS, ScoreSummary
from otel_scorers.config import load_config
from otel_scorers.conventions import use_descriptions
from otel_scorers.conversation_turns import Conversation
from otel_scorers.conversations.source import ConversationSettings
from otel_scorers.human_text import counted, cut
from otel_scorers.keep.keeper import KeepConfig, RunKeeper
from otel_scorers.model import AgentRun, Score
from otel_scorers.otlp.endpoint import unreachable
from otel_scorers.runs.otlp_files import InputProblem, Reading, runs_from_files
from otel_scorers.selection.binding import Binding


def cmd_score(args: argparse.Namespace) -> int:
    from otel_scorers.cli.junit import write_junit_xml
    from otel_scorers.cli.score_baseline import read_summary

    config = load_config(args.config)
    use_descriptions(config.conventions)
    bindings, settings = config.scoring()  # one judge, one budget, for runs and conversations
    names = [binding.name for binding in bindings]
    conversations = backfill_of_conversations(settings)
    conversation_names = (
        [binding.name for binding in conversations.settings.bindings] if conversations is not None else []
    )
    unknown = _unknown_gate(args, names, conversation_names)
    if unknown is not None:
        say(unknown)
        return 2
    baseline: dict[str, ScorerSummary] | None = None
    if args.baseline is not None:
        try:
            baseline = read_summary(args.baseline)
        except ValueError as exc:
            say(f"otel-scorers: {exc}")
            return 2
    problems: list[InputProblem] = []
    out: TelemetryOut | None = None
    if args.otlp_endpoint:
        problem = unreachable(args.otlp_endpoint, args.otlp_protocol)
        if problem is not None:
            say(f"otel-scorers: nothing scored: {problem}")
            return 1
        out = TelemetryOut(args.otlp_endpoint, args.otlp_protocol)
    summary = ScoreSummary(names, args.fail_under, conversation_names)
    cases = ReportCases() if args.html is not None else None
    keeper = _keeper(args)
    watchers: list[ScoreWatcher] = [summary, *(w for w in (cases, keeper) if w is not None)]
    reading = Reading()
    elapsed = _score_all(args, bindings, conversations, summary, watchers, out, reading, problems)
    if out is not None:
        say(f"otel-scorers: {out.close()}")
    if keeper is not None:
        say(f"otel-scorers: kept {counted(keeper.kept, 'run')} in {keeper.config.path}")
    nothing = nothing_read(args.files, reading)
    code = max(report_problems(problems), nothing)
    if not nothing:  # after "nothing to work on", a table of zeros would say nothing more
        say(f"otel-scorers: {summary.headline()} in {elapsed:.1f}s\n{summary.table()}")
        _say_pacing(bindings, summary)
    comparisons = _baseline_gate(args, summary, bindings, baseline)
    if args.junit_xml is not None:
        write_junit_xml(args.junit_xml, summary, elapsed, comparisons)
        say(f"otel-scorers: wrote the JUnit XML report to {args.junit_xml}")
    if args.html is not None and cases is not None:
        _write_html(args, config.report.trace_url, summary, bindings, comparisons, cases)
    return _gates_code(summary, comparisons, code)


def _write_html(
    args: argparse.Namespace,
    trace_url: str | None,
    summary: ScoreSummary,
    bindings: Sequence[Binding],
    comparisons: Sequence[Comparison],
    cases: ReportCases,
) -> None:
    from otel_scorers.cli.html_report import ReportInput, write_html_report
    from otel_scorers.cli.score_baseline import summaries

    baseline = None if args.baseline is None else str(args.baseline)
    report = ReportInput(
        summary,
        summaries(summary, bindings),
        comparisons,
        cases,
        args.confidence,
        trace_url,
        baseline,
    )
    write_html_report(args.html, report)
    say(f"otel-scorers: wrote the HTML report to {args.html}")


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
    each of `watchers` (the summary, the report's cases, the kept runs) and, given `out`, into
    telemetry. The seconds it took."""
    from otel_scorers.cli.backfill import Progress, judge_concurrency, score_runs

    def scored(run: AgentRun, scores: Sequence[Score]) -> None:
        for watcher in watchers:
            watcher.add_run(run, scores)
        if out is not None:
            out.emit(run, scores)

    concurrency = args.concurrency or judge_concurrency(bindings)
    runs = runs_from_files(args.files, problems, progress, reading)
    if conversations is not None:  # grouped across every file, scored at the end of the input
        runs = conversations.runs(runs)
    counter = Progress()
    asyncio.run(
        score_runs(
            bindings,
            runs,
            lambda run, score: write_line(score_to_json(run, score)),
            concurrency,
            scored,
            counter,
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
                lambda conversation, score: write_line(conversation_score_json(conversation, score)),
                conversation_scored,
                concurrency,
            )
        )
    return time.monotonic() - counter.started


def _say_pacing(bindings: Sequence[Binding], summary: ScoreSummary) -> None:
    """What pacing did with a file is not obvious: say it for each budget-paced binding."""
    for binding in bindings:
        if binding.paced is not None:
            policy, tally = binding.paced.policy, summary.tallies[binding.name]
            say(
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
        say(
            f"otel-scorers: {cut(name, MAX_NAME_CHARS)} measured nothing: {summary.tallies[name].failed_text}"
        )
        code = 1
    failed = [verdict for verdict in summary.gate_results() if not verdict.passed]
    for verdict in failed:
        say(f"otel-scorers: gate failed: {cut(verdict.gate.scorer, MAX_NAME_CHARS)} {verdict.measured}")
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
        say(f"otel-scorers: wrote the summary to {args.summary_out}")
    if baseline is None:
        return []
    comparisons = compare(current, baseline, args.baseline_margin, args.confidence)
    say(f"otel-scorers: compared with {args.baseline}\n{comparison_table(comparisons)}")
    for comparison in comparisons:
        if comparison.failed:
            say(f"otel-scorers: regression: {comparison.scorer} {comparison.text()}")
    return comparisons


def backfill_of_conversations(settings: ConversationSettings | None) -> ConversationBackfill | None:
    """The conversations a backfill scores, when the configuration has conversation scorers."""
    if settings is None or not settings.bindings:
        return None
    return ConversationBackfill(settings)
