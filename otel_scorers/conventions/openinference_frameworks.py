"""Which framework a span of OpenInference's is of, for the frameworks whose spans it reads its
own way: by the instrumentation's scope, or by what the framework writes (DSPy's module classes,
BeeAI's component metadata, Haystack's message reprs), so that a scope not shown (renamed, forked, new) is read alike."""

from __future__ import annotations

from otel_scorers.conventions.formats import haystack
from otel_scorers.conventions.openinference_scopes import (
    BEEAI,
    BEEAI_CLASS,
    BEEAI_EVENT,
    DSPY,
    DSPY_AGENTS,
    DSPY_RUN_SUFFIXES,
    HAYSTACK,
    HAYSTACK_RUN_SUFFIXES,
)
from otel_scorers.span_record import SpanRecord


def dspy_agent_class(span: SpanRecord) -> str | None:
    """The agent module of a DSPy `{Module}.forward` span: `ReAct`, `CodeAct` or a subclass
    named like one; other modules (`Predict`, `ChainOfThought`, programs) are not runs. A
    `.forward` of a class so named is DSPy's module call under any scope."""
    return _dspy_agent_named(span.name)


def names_dspy_agent(span_name: str) -> bool:
    """The span name is a DSPy agent module's call (`ReAct.forward`): DSPy's mark."""
    return _dspy_agent_named(span_name) is not None


def _dspy_agent_named(span_name: str) -> str | None:
    for suffix in DSPY_RUN_SUFFIXES:
        if span_name.endswith(suffix):
            name = span_name[: -len(suffix)]
            return name if name.endswith(DSPY_AGENTS) else None
    return None


def dspy_span(span: SpanRecord) -> bool:
    """A DSPy module's span: by its scope, or by the agent module its name calls."""
    return span.scope == DSPY or dspy_agent_class(span) is not None


def beeai_span(span: SpanRecord) -> bool:
    """A BeeAI component's or event's span: by its scope, or by the metadata BeeAI's components
    write (`metadata.class_name`) and its emitter's event path (`metadata.path`), which
    OpenInference flattens for no other framework."""
    return span.scope == BEEAI or written_by_beeai(span)


def written_by_beeai(span: SpanRecord) -> bool:
    """The span carries BeeAI's component metadata or event path, whichever scope wrote it."""
    attributes = span.attributes
    return BEEAI_CLASS in attributes or BEEAI_EVENT in attributes


def haystack_span(span: SpanRecord) -> bool:
    """A Haystack component's span (`{Component}.run`): by its scope, or under any other by the
    `ChatMessage` reprs its recorded input or output holds (how OpenInference writes Haystack's
    messages). With content hidden, only its scope says so."""
    if span.scope == HAYSTACK:
        return True
    if not span.name.endswith(HAYSTACK_RUN_SUFFIXES):
        return False
    attributes = span.attributes
    return haystack.holds_chat_messages(attributes.get("input.value")) or haystack.holds_chat_messages(
        attributes.get("output.value")
    )
