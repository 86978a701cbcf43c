"""Which framework a span of OpenInference's is of, for the frameworks whose spans it reads its
own way: by the instrumentation's scope, or by what the framework writes (DSPy's module classes,
BeeAI's component metadata, Haystack's message reprs), so that a scope not shown (renamed, forked, new) is read alike."""

from __future__ import annotations

from otel_scorers.conventions.base import Convention
from otel_scorers.conventions.formats import haystack
from otel_scorers.conventions.openinference_scopes import (
    BEEAI,
    BEEAI_CLASS,
    BEEAI_EVENT,
    BEEAI_JS_EVENT,
    BEEAI_OUTCOMES,
    DSPY,
    DSPY_AGENTS,
    DSPY_RUN_SUFFIXES,
    HAYSTACK,
    HAYSTACK_RUN_SUFFIXES,
    OPENINFERENCE,
    OWN_CONTENT,
)
from otel_scorers.gen_ai_names import GEN_AI_OPERATION_NAME
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
    return (
        BEEAI_CLASS in attributes
        or BEEAI_EVENT in attributes
        or (BEEAI_JS_EVENT in attributes and beeai_event(span) is not None)
    )


def beeai_event(span: SpanRecord) -> str | None:
    """The emitter event path of a BeeAI event span (`tool.dynamic.getWeather.success`), under
    its Python key or, on a span named after it, its TypeScript one; None for other spans."""
    attributes = span.attributes
    path = attributes.get(BEEAI_EVENT)
    if isinstance(path, str):
        return path
    target = attributes.get(BEEAI_JS_EVENT)
    if (
        isinstance(target, str)
        and span.name.startswith(target)
        and span.name[len(target) : len(target) + 1] == "-"
    ):
        return target
    return None


def beeai_call_event(span: SpanRecord) -> str | None:
    """The tool or model name of a TypeScript BeeAI outcome event, the call's only span
    (`tool.dynamic.getWeather.success` names `getWeather`); None for other spans."""
    target = span.attributes.get(BEEAI_JS_EVENT)
    if beeai_event(span) != target or not isinstance(target, str) or not target.endswith(BEEAI_OUTCOMES):
        return None
    parts = target.split(".")
    return parts[-2] if len(parts) >= 3 else None


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


def labels_genai_span(reader: Convention, span: SpanRecord) -> bool:
    """OpenInference's reader claimed a GenAI span by the kind a processor labelled it with, none
    of its content keys written (OpenInference's for OpenLIT's spans, which marks a model call that
    asked for a tool a TOOL): the span is to be read as the GenAI conventions wrote it."""
    attributes = span.attributes
    if GEN_AI_OPERATION_NAME not in attributes or reader.name != OPENINFERENCE:
        return False
    return attributes.keys().isdisjoint(OWN_CONTENT)
