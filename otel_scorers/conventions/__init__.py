"""Instrumentation conventions, in detection order: the first whose markers a span carries wins."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions.base import Convention, SpanRole
from otel_scorers.conventions.genai import GenAIConvention
from otel_scorers.conventions.google_adk import GoogleADKConvention
from otel_scorers.conventions.openinference import OpenInferenceConvention
from otel_scorers.conventions.openllmetry import OpenLLMetryConvention
from otel_scorers.conventions.pydantic_ai import PydanticAIConvention
from otel_scorers.conventions.strands import StrandsConvention
from otel_scorers.conventions.vercel import VercelAIConvention
from otel_scorers.span_record import SpanRecord

#: Detection order (spec/conventions.md): the most specific markers first, plain GenAI last.
CONVENTIONS: tuple[Convention, ...] = (
    VercelAIConvention(),
    OpenLLMetryConvention(),
    OpenInferenceConvention(),
    PydanticAIConvention(),
    GoogleADKConvention(),
    StrandsConvention(),
    GenAIConvention(),
)

_RUN_NAME_PREFIXES = tuple(dict.fromkeys(p for c in CONVENTIONS for p in c.run_start_names))
_RUN_MARKERS = tuple(dict.fromkeys(m for c in CONVENTIONS for m in c.run_start_markers))
_ABSENT = object()
#: The attribute keys `may_start_run` looks at, so that a caller holding raw OTLP key-values (the
#: sidecar) can pick out just these instead of converting every attribute.
RUN_MARKER_KEYS = frozenset(key for key, _ in _RUN_MARKERS)


def may_start_run(name: str, attributes: Mapping[str, Any] | None) -> bool:
    """Whether a span that is starting may be an agent run. Cheap by design: it runs on the
    agent's thread for every span. A false positive costs a buffer; a false negative, a run."""
    if name.startswith(_RUN_NAME_PREFIXES):
        return True
    if attributes:
        for key, value in _RUN_MARKERS:
            found = attributes.get(key, _ABSENT)
            if found is not _ABSENT and (value is None or found == value):
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


__all__ = ["CONVENTIONS", "RUN_MARKER_KEYS", "Convention", "SpanRole", "classify", "detect", "may_start_run"]
