"""Run building, phase 1: the role each span of a trace plays (run, tool, model, retriever).

Each span is read by the first convention whose markers it carries (`conventions.detect`); that
convention says its role. The project's own spans play none. An agent graph invoked from a tool
may carry nothing that marks it a run: its place under the tool span does
(`Convention.run_under_tool`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from otel_scorers.conventions import Convention, SpanRole, detect
from otel_scorers.span_record import OWN_SCOPE, SpanRecord


@dataclass(slots=True)
class SpanRoles:
    """A trace's spans by id (but the project's own), the role each plays as its convention
    detects it, and the convention of each span that plays none."""

    by_id: dict[int, SpanRecord]
    roles: dict[int, tuple[Convention, SpanRole]]
    unroled: dict[int, Convention]


def span_roles(spans: Iterable[SpanRecord]) -> SpanRoles:
    """The role of each span of one trace (`SpanRoles`)."""
    by_id: dict[int, SpanRecord] = {}
    roles: dict[int, tuple[Convention, SpanRole]] = {}
    unroled: dict[int, Convention] = {}
    for span in spans:
        if span.scope == OWN_SCOPE:
            continue
        by_id[span.span_id] = span
        found = detect(span)
        if found is None:
            continue
        role = found.role(span)
        if role is not None:
            roles[span.span_id] = (found, role)
        else:
            unroled[span.span_id] = found

    # An agent graph invoked from a tool may carry nothing that marks it a run: its place does.
    for span_id, span in by_id.items():
        parent_role = roles.get(span.parent_span_id) if span.parent_span_id is not None else None
        if span_id in roles or parent_role is None or parent_role[1] != "tool":
            continue
        convention = unroled.get(span_id)
        if convention is not None and convention.run_under_tool(span):
            roles[span_id] = (convention, "run")
            del unroled[span_id]
    return SpanRoles(by_id, roles, unroled)
