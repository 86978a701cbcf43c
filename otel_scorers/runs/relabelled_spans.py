"""Spans a processor rewrote into another vocabulary's keys, read as their instrumentation wrote them.

An exporter bridge (OpenInference's span processors for OpenLIT's and OpenLLMetry's spans)
relabels each span as it ends: a GenAI span gets OpenInference's kind beside its GenAI keys
(`openinference_frameworks.labels_genai_span`: read by the GenAI reader), and an OpenLLMetry span
loses its kind key for OpenInference's, its name keeping the kind (`openllmetry_bridged.rewritten_kind`:
a workflow is a run, a task a step of it, no tool call).
"""

from __future__ import annotations

from otel_scorers.conventions import SHIPPED, Convention, SpanRole
from otel_scorers.conventions.openinference_frameworks import labels_genai_span
from otel_scorers.conventions.openllmetry_bridged import rewritten_kind
from otel_scorers.span_record import SpanRecord

_GENAI = next(convention for convention in SHIPPED if convention.name == "genai")


def reader_as_written(found: Convention | None, span: SpanRecord) -> Convention | None:
    """The reader of the span as its instrumentation wrote it: `found`, but for a GenAI span a
    processor labelled with OpenInference's kind."""
    return _GENAI if found is not None and labels_genai_span(found, span) else found


def role_as_named(span: SpanRecord, role: SpanRole | None) -> tuple[SpanRole | None, bool]:
    """(role, renamed): the role of the kind the span's name kept when a processor rewrote its
    kind key (`rewritten_kind`; a model call keeps its role), else `role`; renamed when so."""
    rewritten = rewritten_kind(span)
    if rewritten is None or role == "model":
        return role, False
    return ("run" if rewritten[0] == "workflow" else None), True
