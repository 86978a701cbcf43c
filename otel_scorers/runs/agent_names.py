"""An agent's name, from every place a convention keeps one, whichever reader claimed its span.

Readers know where their own instrumentation names an agent; a span that another instrumentation
also wrote on (OpenInference's span processor over Pydantic AI's GenAI spans) may name it where
the reader does not look. When the reader fell back to the span's name, the keys every
convention shares are read, then the span-name forms of the GenAI conventions (`invoke_agent X`).
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
    attributes = span.attributes
    for key in NAME_KEYS:
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
    name = span.name
    for prefix in NAME_PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix) :]
    return read
