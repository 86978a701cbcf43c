"""Spans a processor relabelled into another vocabulary's keys, known by their kind.

An exporter bridge (OpenInference's span processors for OpenLIT's and OpenLLMetry's spans)
relabels each span as it ends; run building reads such a span as its instrumentation wrote it
(`runs/relabelled_spans`). Whether a span is one is decided by its scope, name and keys and by
its reader, all of which its kind holds (`conventions.detect`): once per kind of span.
"""

from __future__ import annotations

from otel_scorers.conventions.base import Convention
from otel_scorers.conventions.openinference_frameworks import labels_genai_span
from otel_scorers.conventions.openllmetry import SPAN_KIND
from otel_scorers.conventions.openllmetry_bridged import KIND_NAME_ENDS
from otel_scorers.span_record import SpanRecord


def relabelled(found: Convention | None, span: SpanRecord) -> bool:
    """A processor relabelled the span `found` claims: a GenAI span labelled with OpenInference's
    kind (`openinference_frameworks.labels_genai_span`), or a span whose name keeps an OpenLLMetry
    kind without OpenLLMetry's kind key: it may be one whose key was rewritten
    (`openllmetry_bridged.rewritten_kind`, which also reads values no kind holds)."""
    if found is not None and labels_genai_span(found, span):
        return True
    return span.name.endswith(KIND_NAME_ENDS) and SPAN_KIND not in span.attributes
