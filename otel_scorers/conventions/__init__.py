"""Instrumentation conventions, in detection order: the first whose markers a span carries wins."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions.base import Convention, SpanRole
from otel_scorers.conventions.genai import GenAIConvention
from otel_scorers.span_record import SpanRecord

CONVENTIONS: tuple[Convention, ...] = (GenAIConvention(),)

#: Span names and attribute values that may open an agent run, checked when a span starts so that
#: the trace is buffered from then on. Cheap by design: it runs on the agent's thread.
_RUN_NAME_PREFIXES = ("invoke_agent",)
_RUN_MARKERS: tuple[tuple[str, str], ...] = (("gen_ai.operation.name", "invoke_agent"),)


def may_start_run(name: str, attributes: Mapping[str, Any] | None) -> bool:
    if name.startswith(_RUN_NAME_PREFIXES):
        return True
    if attributes:
        for key, value in _RUN_MARKERS:
            if attributes.get(key) == value:
                return True
    return False


def detect(span: SpanRecord) -> Convention | None:
    for convention in CONVENTIONS:
        if convention.detect(span):
            return convention
    return None


def classify(span: SpanRecord) -> tuple[Convention, SpanRole] | None:
    """The span's convention and role, or None for spans that play no part in a run."""
    convention = detect(span)
    if convention is None:
        return None
    role = convention.role(span)
    return (convention, role) if role is not None else None


__all__ = ["CONVENTIONS", "Convention", "SpanRole", "classify", "detect", "may_start_run"]
