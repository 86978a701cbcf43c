"""A score summary as a JUnit XML report, the format CI systems show as test results.

One test case per scorer, in one suite named `otel-scorers`: a scorer whose gate failed is a
failure (the message is the verdict, the body lists failing runs), a scorer that failed on every
run it tried is an error, one that skipped every run is skipped; the rest pass. Each case's output holds
the scorer's tally, so a passing scorer still shows what it measured.

The report is bounded whatever the traces hold: at most 20 failing runs listed per scorer (with
the count of the rest), each reason cut to `MAX_REASON_CHARS` and each name to `MAX_NAME_CHARS`,
saying how many characters were cut.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from otel_scorers.cli.score_baseline import Comparison
from otel_scorers.cli.score_summary import (
    MAX_NAME_CHARS,
    MAX_REASON_CHARS,
    GateResult,
    ScorerTally,
    ScoreSummary,
)
from otel_scorers.human_text import counted, cut

SUITE = "otel-scorers"
# Characters XML 1.0 cannot carry, even escaped (trace text may hold them).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def _tally_text(tally: ScorerTally) -> str:
    mean = f"{tally.mean:.3f}" if tally.mean is not None else "-"
    return (
        f"scored {tally.scored}, mean {mean}, labels {tally.labels_text}, "
        f"skipped {tally.skipped}, errors {tally.errors}"
    )


def _failures_text(tally: ScorerTally) -> str:
    lines = [
        (f"conversation {f.conversation_id}, last " if f.conversation_id is not None else "")
        + f"trace {f.trace_id} span {f.span_id} ({f.agent_name or 'unnamed agent'}): {f.reason}"
        for f in tally.failures
    ]
    if tally.failure_count > len(tally.failures):
        lines.append(f"... and {tally.failure_count - len(tally.failures)} more")
    return "\n".join(lines)


def junit_xml(summary: ScoreSummary, elapsed_s: float = 0.0, comparisons: Sequence[Comparison] = ()) -> bytes:
    """The report as UTF-8 XML; with `comparisons`, a case per scorer compared with a baseline."""
    gates: dict[str, list[GateResult]] = {}
    for verdict in summary.gate_results():
        gates.setdefault(verdict.gate.scorer, []).append(verdict)
    suite = ET.Element("testsuite", name=SUITE, time=f"{elapsed_s:.3f}")
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for name, tally in summary.tallies.items():
        case = ET.SubElement(
            suite, "testcase", classname=SUITE, name=_text(cut(name, MAX_NAME_CHARS)), time="0"
        )
        counts["tests"] += 1
        failed = [verdict for verdict in gates.get(name, ()) if not verdict.passed]
        if failed:
            failure = ET.SubElement(
                case, "failure", type="gate", message=_text("; ".join(v.measured for v in failed))
            )
            failure.text = _text(_failures_text(tally))
            counts["failures"] += 1
        elif tally.only_errors:
            error = ET.SubElement(
                case,
                "error",
                type="scorer_error",
                message=f"the scorer measured nothing: {tally.failed_text}",
            )
            error.text = _text(_failures_text(tally))
            counts["errors"] += 1
        elif tally.skipped and tally.scored == 0 and tally.errors == 0:
            ET.SubElement(case, "skipped", message=f"all {counted(tally.skipped, tally.per)} skipped")
            counts["skipped"] += 1
        ET.SubElement(case, "system-out").text = _text(cut(_tally_text(tally), MAX_REASON_CHARS))
    for comparison in comparisons:
        _add_comparison(suite, comparison, counts)
    for key, value in counts.items():
        suite.set(key, str(value))
    root = ET.Element("testsuites", {key: str(value) for key, value in counts.items()}, name=SUITE)
    root.set("time", f"{elapsed_s:.3f}")
    root.append(suite)
    ET.indent(root)
    written: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return written + b"\n"


def _add_comparison(suite: ET.Element, comparison: Comparison, counts: dict[str, int]) -> None:
    """A scorer against the baseline: failed when it regressed, skipped when not compared."""
    case = ET.SubElement(
        suite,
        "testcase",
        classname=f"{SUITE}.baseline",
        name=_text(f"{comparison.scorer} vs baseline"),
        time="0",
    )
    counts["tests"] += 1
    if comparison.failed:
        ET.SubElement(case, "failure", type=comparison.verdict, message=_text(comparison.text()))
        counts["failures"] += 1
    elif comparison.verdict == "not_compared":
        ET.SubElement(case, "skipped", message=_text(comparison.note))
        counts["skipped"] += 1
    ET.SubElement(case, "system-out").text = _text(comparison.text())


def write_junit_xml(
    path: Path, summary: ScoreSummary, elapsed_s: float = 0.0, comparisons: Sequence[Comparison] = ()
) -> None:
    path.write_bytes(junit_xml(summary, elapsed_s, comparisons))
