"""An agent's name, from every place a convention keeps one, whichever reader claimed its span.

Readers know where their own instrumentation names an agent; a span that another instrumentation
also wrote on (OpenInference's span processor over Pydantic AI's GenAI spans) may name it where
the reader does not look. When the reader fell back to the span's name, the keys every
convention shares are read, then the span-name forms of the GenAI conventions (`invoke_agent X`),
on the run's span, then on the agent span wrapping the run.
"""

from __future__ import annotations

from otel_scorers.span_record import SpanRecord

#: Attributes that name the agent a span runs, most specific first (GenAI, OpenInference).
NAME_KEYS = ("gen_ai.agent.name", "agent.name")
#: Span-name prefixes followed by the agent's name (GenAI: `invoke_agent {gen_ai.agent.name}`).
NAME_PREFIXES = ("invoke_agent ",)


def agent_name(span: SpanRecord, read: str | None) -> str | None:
    """The agent's name: what the span's reader read, unless that is only the span's own name
    (the reader's last resort), which the keys and span-name forms every convention shares may
    say better. A reader that read no name meant none (a conversation named after its turns)."""
    if read is None or read != span.name:
        return read
    return named_by_keys(span) or read


def named_by_keys(span: SpanRecord) -> str | None:
    """The agent's name by the keys and span-name forms every convention shares; None when the
    span names it by none. A run whose reader named it only by its span's own name takes the name
    the agent span wrapping it gives so (`run_parts.content_of`): one invocation's agent named by
    one layer (autogen-core's `invoke_agent weather_agent`) names the span a tracer of any code
    named after the method it traced inside it (`weather_agent.on_messages`)."""
    attributes = span.attributes
    for key in NAME_KEYS:
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
    name = span.name
    for prefix in NAME_PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix) :]
    return None
