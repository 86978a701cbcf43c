"""Spans OpenLLMetry's LangChain instrumentation wrote whose kind key a processor rewrote into
another vocabulary's (OpenInference's processor for OpenLLMetry spans): their names keep the kind
OpenLLMetry gave them."""

from __future__ import annotations

from otel_scorers.conventions.openinference_scopes import KIND
from otel_scorers.conventions.openllmetry import SPAN_KIND
from otel_scorers.span_record import SpanRecord

#: The kind OpenInference's processor for OpenLLMetry spans writes for each kind a name keeps.
_BRIDGED_KINDS = {"workflow": "CHAIN", "task": "TOOL"}
#: How the names of the spans `rewritten_kind` reads end.
KIND_NAME_ENDS = tuple(f".{kind}" for kind in _BRIDGED_KINDS)


def rewritten_kind(span: SpanRecord) -> tuple[str, str] | None:
    """(kind, entity) of a span OpenLLMetry's LangChain instrumentation wrote, named
    `{entity}.{kind}` for a workflow or a task, when a processor rewrote its kind key into another
    vocabulary's: what OpenLLMetry's kind said it is. OpenInference's processor for OpenLLMetry
    spans makes a workflow a CHAIN and a task a TOOL named after the entity, which says so under
    any scope. None for any other span."""
    attributes = span.attributes
    if SPAN_KIND in attributes:
        return None
    entity, _, kind = span.name.rpartition(".")
    bridged = _BRIDGED_KINDS.get(kind)
    if not entity or bridged is None or attributes.get(KIND) != bridged:
        return None
    if kind == "task" and attributes.get("tool.name") != entity:
        return None  # a TOOL of OpenInference's own, named as it pleased
    return kind, entity
