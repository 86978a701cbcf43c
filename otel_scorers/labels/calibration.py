"""`otel-scorers calibrate`: the judge's agreement with people from files. Every run of the trace
files is judged by each scorer the labels name (sampling and rate limits lifted: calibration
needs the judge's verdict on every labelled run, and the judge-only estimate over all of them),
the labels are joined with those scores as they are live (`agreement.Agreement`), and the report
says, per scorer and evaluator version, the pairs, agreement, κ with the base rates, the value
figures, the judge-only and the corrected estimates, and the disagreements.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any
from xml.etree import ElementTree

from otel_scorers.human_text import counted
from otel_scorers.labels.agreement import Agreement
from otel_scorers.labels.join_records import Label, Pair
from otel_scorers.selection.binding import Binding
from otel_scorers.selection.sampling import TraceIdSampler

#: Most disagreements listed per scorer in the report.
MAX_LISTED = 100


def calibration_bindings(bindings: Sequence[Binding], labels: Sequence[Label]) -> list[Binding]:
    """The bindings the labels name, each scoring every run it admits (its filter still holds)."""
    named = {label.scorer for label in labels}
    return [
        replace(binding, sampler=TraceIdSampler(1.0), limiter=None, paced=None, max_per_minute=None)
        for binding in bindings
        if binding.name in named
    ]


def _number(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.3f}"


def _interval(figures: dict[str, Any] | None, prefix: str) -> str:
    if not figures or figures.get(f"{prefix}_estimate") is None:
        return "-"
    return f"{figures[f'{prefix}_estimate']:.3f} [{figures[f'{prefix}_low']:.3f}, {figures[f'{prefix}_high']:.3f}]"


def _pair_json(pair: Pair) -> dict[str, Any]:
    score, label = pair.score, pair.label
    return {
        "trace_id": f"{score.trace_id:032x}",
        "span_id": f"{score.span_id:016x}",
        "judge": {"value": score.value, "label": score.label},
        "human": {"value": label.value, "label": label.label},
        "reviewer": label.reviewer,
        "comment": label.comment,
    }


def report(agreement: Agreement) -> list[dict[str, Any]]:
    """One document per scorer and evaluator version, sorted by scorer."""
    snapshot = agreement.snapshot()
    documents = []
    for (scorer, version), figures in sorted(snapshot.items()):
        stats = agreement.by_scorer.get((scorer, version))
        disagreements = list(stats.disagreements)[:MAX_LISTED] if stats is not None else []
        documents.append(
            {
                "scorer": scorer,
                "evaluator_version": version,
                **figures,
                "unpaired_labels": agreement.unpaired.get(scorer, 0),
                "disagreements": [_pair_json(pair) for pair in disagreements],
            }
        )
    known = {document["scorer"] for document in documents}
    for scorer, count in sorted(agreement.unpaired.items()):
        if scorer not in known:
            documents.append(
                {"scorer": scorer, "evaluator_version": "", "pairs": 0, "unpaired_labels": count}
            )
    return documents


def unshared_labels(document: dict[str, Any]) -> str | None:
    """Why the judge's and people's labels of one scorer cannot agree, when they share no label
    word (the judge said `relevant`/`not_relevant`, people `pass`/`fail`): every pair is then a
    disagreement and κ says nothing of the judge. None when they share one, or had no pair."""
    judge = set(document.get("judge_rates") or {})
    human = set(document.get("human_rates") or {})
    if not judge or not human or judge & human:
        return None
    return (
        f"{document['scorer']}: the judge's labels ({', '.join(sorted(judge))}) and people's "
        f"({', '.join(sorted(human))}) share no word, so they cannot agree: label with the "
        "scorer's own words (docs/agreement.md#label-words)"
    )


def table(documents: Sequence[dict[str, Any]]) -> str:
    """The report as text: a row per scorer, then its disagreements."""
    header = ("scorer", "version", "pairs", "agree", "kappa", "human pass", "judge pass", "MAD", "spearman")
    rows = [header]
    for document in documents:
        human = document.get("human_rates") or {}
        judge = document.get("judge_rates") or {}
        rows.append(
            (
                document["scorer"],
                document.get("evaluator_version") or "-",
                str(document.get("pairs", 0)),
                _number(document.get("agreement")),
                _number(document.get("kappa")),
                _number(human.get("pass")),
                _number(judge.get("pass")),
                _number(document.get("mean_absolute_difference")),
                _number(document.get("spearman")),
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    for document in documents:
        for quantity in ("pass_rate", "value"):
            figures = document.get(quantity)
            if figures:
                corrected = (
                    f"corrected by {counted(figures['labelled'], 'label')} {_interval(figures, 'corrected')}"
                    if figures.get("corrected_estimate") is not None
                    else "no correction (fewer than 2 labelled)"
                )
                lines.append(
                    f"{document['scorer']} {quantity}: judge only {_interval(figures, 'judge')}, {corrected} (95%)"
                )
        if document.get("unpaired_labels"):
            lines.append(
                f"{document['scorer']}: {counted(document['unpaired_labels'], 'label')} for runs it did not score"
            )
        for pair in document.get("disagreements", ()):
            lines.append(
                f"  disagree {pair['trace_id']}/{pair['span_id']}: judge {pair['judge']['label'] or pair['judge']['value']}, "
                f"human {pair['human']['label'] or pair['human']['value']}"
                + (f" ({pair['reviewer']})" if pair["reviewer"] else "")
                + (f": {pair['comment'][:80]}" if pair["comment"] else "")
            )
    return "\n".join(lines)


def junit(documents: Sequence[dict[str, Any]], min_kappa: float | None) -> bytes:
    """A test case per scorer, failed when its κ is below `min_kappa` (or cannot be computed)."""
    suite = ElementTree.Element("testsuite", name="otel-scorers calibrate", tests=str(len(documents)))
    failures = 0
    for document in documents:
        case = ElementTree.SubElement(
            suite,
            "testcase",
            classname="calibrate",
            name=f"{document['scorer']} {document.get('evaluator_version') or ''}".strip(),
        )
        kappa = document.get("kappa")
        unshared = unshared_labels(document)
        text = (
            f"pairs {document.get('pairs', 0)}, agreement {_number(document.get('agreement'))}, "
            f"kappa {_number(kappa)}, unpaired labels {document.get('unpaired_labels', 0)}"
        )
        if min_kappa is not None and (kappa is None or kappa < min_kappa or unshared):
            failures += 1
            failure = ElementTree.SubElement(
                case, "failure", message=unshared or f"kappa {_number(kappa)} below {min_kappa:g}"
            )
            failure.text = text
        else:
            ElementTree.SubElement(case, "system-out").text = text
    suite.set("failures", str(failures))
    xml: bytes = ElementTree.tostring(suite, encoding="utf-8", xml_declaration=True)
    return xml
