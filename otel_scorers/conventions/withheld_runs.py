"""Shipped descriptions read without their run-finding clauses (`run`, its `conversation`, and
`handoff`), their vocabulary kept (scope, markers, `tool` and `model`): a tracer the project
knows over a framework whose run shape its description was not written from (bench/fidelity.py
`--without-runs`)."""

from __future__ import annotations

from collections.abc import Collection

from otel_scorers.conventions.base import Convention
from otel_scorers.conventions.described import DescribedConvention
from otel_scorers.conventions.description import RunReading
from otel_scorers.span_record import SpanRecord


class RunsWithheld(DescribedConvention):
    """A shipped description without its run-finding clauses: its run clause, written for another
    framework, finds no run, nor counts a root span of its vocabulary as one (`run_at_top`, the
    rule for a description that states no run clause)."""

    def run_at_top(self, span: SpanRecord) -> bool:
        return False


def without_runs(conventions: tuple[Convention, ...], names: Collection[str]) -> tuple[Convention, ...]:
    """`conventions`, each description named in `names` read without its run-finding clauses."""
    if not names:
        return conventions
    return tuple(
        RunsWithheld(c.description.model_copy(update={"run": RunReading(), "handoff": None}))
        if isinstance(c, DescribedConvention) and c.name in names
        else c
        for c in conventions
    )
