"""Instrumentation conventions, in detection order: the first whose markers a span carries wins."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions.base import Convention, SpanRole
from otel_scorers.conventions.genai import GenAIConvention
from otel_scorers.conventions.google_adk import GoogleADKConvention
from otel_scorers.conventions.mastra import MastraConvention
from otel_scorers.conventions.openinference import OpenInferenceConvention
from otel_scorers.conventions.openllmetry import OpenLLMetryConvention
from otel_scorers.conventions.pydantic_ai import PydanticAIConvention
from otel_scorers.conventions.strands import StrandsConvention
from otel_scorers.conventions.vercel import VercelAIConvention
from otel_scorers.span_record import SpanRecord

#: Detection order (docs/conventions.md): the most specific markers first, plain GenAI last.
CONVENTIONS: tuple[Convention, ...] = (
    MastraConvention(),
    VercelAIConvention(),
    OpenLLMetryConvention(),
    OpenInferenceConvention(),
    PydanticAIConvention(),
    GoogleADKConvention(),
    StrandsConvention(),
    GenAIConvention(),
)

RUN_NAME_PREFIXES = tuple(dict.fromkeys(p for c in CONVENTIONS for p in c.run_start_names))
#: attribute key -> the values that mark a run (None: the key's presence alone does).
RUN_MARKERS: dict[str, frozenset[str] | None] = {}
for _convention in CONVENTIONS:
    for _key, _value in _convention.run_start_markers:
        if _value is None or RUN_MARKERS.get(_key, frozenset()) is None:
            RUN_MARKERS[_key] = None
        else:
            RUN_MARKERS[_key] = (RUN_MARKERS.get(_key) or frozenset()) | {_value}
#: Instrumentation scopes whose run spans carry their markers only when they end (optional
#: `run_start_scopes` of a convention): the first span of such a scope opens a trace's buffer.
RUN_START_SCOPES = frozenset(scope for c in CONVENTIONS for scope in getattr(c, "run_start_scopes", ()))
#: The attribute keys worth reading from a span that starts (or arrives over OTLP) to spot a run.
RUN_MARKER_KEYS = frozenset(RUN_MARKERS)


def may_start_run(name: str, attributes: Mapping[str, Any] | None) -> bool:
    """Whether a span that is starting may be an agent run. Cheap by design: it runs on the
    agent's thread for every span, so it walks the few attributes a span starts with rather
    than looking up every marker. A false positive costs a buffer; a false negative, a run."""
    if name.startswith(RUN_NAME_PREFIXES):
        return True
    if not attributes:
        return False
    # Walk whichever side is shorter: a span's few start attributes, or the marker keys.
    keys = attributes if len(attributes) <= len(RUN_MARKERS) else RUN_MARKERS
    for key in keys:
        if key in RUN_MARKERS and key in attributes:
            values = RUN_MARKERS[key]
            if values is None or attributes[key] in values:
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


__all__ = [
    "CONVENTIONS",
    "RUN_MARKERS",
    "RUN_MARKER_KEYS",
    "RUN_NAME_PREFIXES",
    "RUN_START_SCOPES",
    "Convention",
    "SpanRole",
    "classify",
    "detect",
    "may_start_run",
]
