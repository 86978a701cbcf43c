"""`score --html`: one self-contained HTML page a person opens from a CI artifact.

Per scorer its pass rate or mean with its interval and, given a baseline, the change against it;
then the failing runs (input, answer, tool calls, and each failing score's reason or the judge's
explanation) and the failing conversations, each linked to its trace when the config gives a URL
template (`report: {trace_url: ...}`). The page loads nothing: inline CSS, no script, and a
content security policy that forbids any, so trace text that escaped its escaping still could not
run. Every text of the traces is HTML-escaped, and its terminal control and bidirectional
formatting characters shown as `\\uXXXX` (`human_text.printable`), as the terminal output does.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from otel_scorers.cli.report_cases import Case, ReportCases
from otel_scorers.cli.score_baseline import Comparison, ScorerSummary
from otel_scorers.cli.score_summary import GateResult, ScoreSummary
from otel_scorers.human_text import counted, printable

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#1d232a;max-width:80em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #c9d1d9;padding:.3em .6em;text-align:left;vertical-align:top}
th{background:#f0f3f6}td.number{text-align:right;font-variant-numeric:tabular-nums}
tr.regression td{background:#ffe9e9}.fail{color:#b42318;font-weight:600}.ok{color:#1a7f37}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:.4em;margin:.2em 0}
section.case{border:1px solid #c9d1d9;border-radius:6px;padding:.4em 1em;margin:1em 0}
dt{font-weight:600}dd{margin:0 0 .4em 0}
"""
_POLICY = "default-src 'none'; style-src 'unsafe-inline'"


def text(value: str | None) -> str:
    """Trace text as HTML: escaped, its control characters shown as `\\uXXXX`."""
    return html.escape(printable(value or "", newlines=True), quote=True)


def number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def interval(bounds: tuple[float, float] | None) -> str:
    return "-" if bounds is None else f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"


@dataclass(frozen=True, slots=True)
class ReportInput:
    """What one `score` run came to, for its page."""

    summary: ScoreSummary
    scorers: Mapping[str, ScorerSummary]
    comparisons: Sequence[Comparison]
    cases: ReportCases
    confidence: float
    trace_url: str | None = None
    baseline_name: str | None = None


def trace_link(template: str | None, trace_id: str, span_id: str) -> str:
    """The trace's id, linked to it when there is a URL template."""
    shown = f"<code>{text(trace_id)}</code>"
    if template is None:
        return shown
    url = template.replace("{trace_id}", trace_id).replace("{span_id}", span_id)
    return f'<a class="trace" href="{html.escape(url, quote=True)}">{shown}</a>'


def _gate_text(verdicts: Sequence[GateResult]) -> str:
    parts = [f'<span class="{"ok" if v.passed else "fail"}">{text(str(v))}</span>' for v in verdicts]
    return "; ".join(parts) or "-"


def scorer_table(report: ReportInput) -> str:
    """A row per scorer: what it scored, pass rate and mean with their intervals, gates, change."""
    verdicts: dict[str, list[GateResult]] = {}
    for verdict in report.summary.gate_results():
        verdicts.setdefault(verdict.gate.scorer, []).append(verdict)
    changes = {comparison.scorer: comparison for comparison in report.comparisons}
    level = f"{report.confidence:g}"
    head = [
        "scorer", "per", "scored", "pass rate", f"interval ({level})", "mean", f"interval ({level})",
        "labels", "skipped", "errors", "gate",
    ]  # fmt: skip
    if report.baseline_name is not None:
        head.append("against the baseline")
    rows = ["<tr>" + "".join(f"<th>{text(cell)}</th>" for cell in head) + "</tr>"]
    for name, tally in report.summary.tallies.items():
        entry = report.scorers.get(name)
        change = changes.get(name)
        cells = [
            f'<td class="scorer">{text(name)}</td>',
            f"<td>{tally.per}</td>",
            f'<td class="number scored">{tally.scored}</td>',
            f'<td class="number pass-rate">{number(entry.pass_rate if entry else None)}</td>',
            f'<td class="pass-rate-interval">{interval(entry.pass_rate_interval(report.confidence) if entry else None)}</td>',
            f'<td class="number mean">{number(entry.mean if entry else None)}</td>',
            f'<td class="mean-interval">{interval(entry.mean_interval(report.confidence) if entry else None)}</td>',
            f'<td class="labels">{text(tally.labels_text)}</td>',
            f'<td class="number skipped">{tally.skipped}</td>',
            f'<td class="number errors">{tally.errors}</td>',
            f'<td class="gate">{_gate_text(verdicts.get(name, ()))}</td>',
        ]
        if report.baseline_name is not None:
            cells.append(f'<td class="change">{_change(change)}</td>')
        regression = change is not None and change.failed
        rows.append(
            f'<tr class="{"regression" if regression else "scorer"}" data-scorer="{text(name)}">{"".join(cells)}</tr>'
        )
    for comparison in report.comparisons:  # in the baseline only
        if comparison.scorer not in report.summary.tallies:
            cells = [f'<td class="scorer">{text(comparison.scorer)}</td>'] + ["<td>-</td>"] * (len(head) - 2)
            rows.append(
                f'<tr data-scorer="{text(comparison.scorer)}">{"".join(cells)}<td class="change">{_change(comparison)}</td></tr>'
            )
    return '<table id="scorers">' + "".join(rows) + "</table>"


def _change(comparison: Comparison | None) -> str:
    if comparison is None:
        return "-"
    css = "fail" if comparison.failed else "ok" if comparison.verdict == "no_regression" else ""
    return f'<span class="{css}">{text(comparison.text())}</span>'


def case_section(case: Case, template: str | None) -> str:
    """A failing run (or conversation): where its trace is, what it was, and why it failed."""
    parts = ['<section class="case">']
    title = (
        f"conversation <code>{text(case.conversation_id)}</code>, last run "
        if case.conversation_id
        else "run "
    )
    agent = f" · agent {text(case.agent_name)}" if case.agent_name else ""
    turns = f" · {counted(case.turns, 'turn')}" if case.conversation_id else ""
    parts.append(
        f"<h3>{title}{trace_link(template, case.trace_id, case.span_id)} span <code>{text(case.span_id)}</code>{agent}{turns}</h3>"
    )
    parts.append('<ul class="failed">')
    for failed in case.failed:
        parts.append(
            f'<li><span class="fail">{text(failed.scorer)}: {failed.verdict}</span><pre class="reason">{text(failed.reason)}</pre></li>'
        )
    parts.append("</ul><dl>")
    first = "first input" if case.conversation_id else "input"
    last = "last answer" if case.conversation_id else "answer"
    parts.append(
        f'<dt>{first}</dt><dd><pre class="input">{text(case.input) or "<i>not recorded</i>"}</pre></dd>'
    )
    parts.append(
        f'<dt>{last}</dt><dd><pre class="output">{text(case.output) or "<i>not recorded</i>"}</pre></dd>'
    )
    parts.append("</dl>")
    if case.tool_calls:
        parts.append(
            '<table class="tools"><tr><th>tool</th><th>arguments</th><th>result</th><th>state</th></tr>'
        )
        for call in case.tool_calls:
            parts.append(
                f"<tr><td>{text(call.name)}</td><td><pre>{text(call.arguments)}</pre></td>"
                f"<td><pre>{text(call.result)}</pre></td><td>{text(call.state)}</td></tr>"
            )
        parts.append("</table>")
        if case.more_tool_calls:
            parts.append(f"<p>... and {counted(case.more_tool_calls, 'more tool call')}</p>")
    parts.append("</section>")
    return "".join(parts)


def _cases(title: str, cases: Sequence[Case], total: int, noun: str, template: str | None) -> str:
    shown = f" (the first {len(cases)})" if total > len(cases) else ""
    parts = [f'<h2 id="{noun.replace(" ", "-")}s">{title}: {total}{shown}</h2>']
    if not cases:
        parts.append(f"<p>No failing {noun}.</p>")
    parts.extend(case_section(case, template) for case in cases)
    return "".join(parts)


def render(report: ReportInput) -> str:
    """The whole page."""
    cases = report.cases
    baseline = (
        f"<p>Compared with the baseline <code>{text(report.baseline_name)}</code>.</p>"
        if report.baseline_name is not None
        else ""
    )
    body = [
        "<h1>otel-scorers report</h1>",
        f'<p id="headline">{text(report.summary.headline())}</p>',
        baseline,
        "<h2>Scorers</h2>",
        scorer_table(report),
        _cases("Failing runs", cases.runs, cases.failing_runs, "failing run", report.trace_url),
    ]
    if any(tally.per == "conversation" for tally in report.summary.tallies.values()):
        body.append(
            _cases(
                "Failing conversations",
                cases.conversations,
                cases.failing_conversations,
                "failing conversation",
                report.trace_url,
            )
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">'
        "<title>otel-scorers report</title>"
        f"<style>{_STYLE}</style></head><body>{''.join(body)}</body></html>\n"
    )


def write_html_report(path: Path, report: ReportInput) -> None:
    path.write_text(render(report), encoding="utf-8")
