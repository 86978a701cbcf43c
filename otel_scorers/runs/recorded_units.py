"""The unit of work around a run joined from its model calls (`call_chains.py`), named as its span
is: an application's own span around the calls, of no reader's role, that recorded the request
the run was asked as its input (a key whose last part is `input`: Laminar's `observe()` root,
`lmnr.span.input`; or a key every reader reads for a run's request, `gen_ai.prompt`), is the run's unit of work, and its span's name the agent's, where no span
around the calls names an agent by a key. The outermost such span names it, up to the tool span
that ran the calls, if any; a span whose name only says a run's kind (`pipeline.workflow`) names
none."""

from __future__ import annotations

import re

from otel_scorers.conventions.inferred_kinds import ANY_RUN_KIND
from otel_scorers.conventions.inferred_names import labels_kind
from otel_scorers.runs.ancestry import MAX_DEPTH
from otel_scorers.runs.generic_io import RUN_INPUT_KEYS
from otel_scorers.runs.span_roles import SpanRoles
from otel_scorers.span_record import SpanRecord

#: A key recording what a span was given: `input`, or its last part `input` (`acme.span.input`).
_INPUT_KEY = re.compile(r"(?i)^(?:.*[.:])?input$")


def unit_of_work_name(span: SpanRecord, found: SpanRoles, request: str | None) -> str | None:
    """The name of the outermost span around `span`, of no role, recording `request` as its
    input; None when none does."""
    if not request:
        return None
    named: str | None = None
    parent = span.parent_span_id
    for _ in range(MAX_DEPTH):
        around = found.by_id.get(parent) if parent is not None else None
        if around is None:
            break
        if around.span_id in found.roles:
            if found.roles[around.span_id][1] == "tool":
                break
        elif names_its_unit(around, request):
            named = around.name
        parent = around.parent_span_id
    return named


def names_its_unit(span: SpanRecord, request: str) -> bool:
    """The span's name names the unit of work it is: it recorded `request` as its input, and its
    name says more than a run's kind."""
    return bool(span.name) and not labels_kind(span.name, ANY_RUN_KIND) and _records(span, request)


def _records(span: SpanRecord, request: str) -> bool:
    """The span recorded `request` in a key of its input."""
    return any(
        type(value) is str
        and request in value
        and (_INPUT_KEY.match(key) is not None or key in RUN_INPUT_KEYS)
        for key, value in span.attributes.items()
    )
