"""An agent's name, from every place a convention keeps one, whichever reader claimed its span.

Readers know where their own instrumentation names an agent; a span that another instrumentation
also wrote on (OpenInference's span processor over Pydantic AI's GenAI spans) may name it where
the reader does not look. When the reader fell back to the span's name, the keys every
convention shares are read, then the span-name forms of an agent's run (GenAI's `invoke_agent X`,
`agent_run [X]`, a label and the name quoted: `agent run: 'X'`), on the run's span, then on the
agent span wrapping the run. A run that no span marks (joined from
its model calls) is named by the graph it ran in when no span around its calls names an agent: a
span holding a graph's messages state as its input, named after its operation as GenAI names spans
(LoongSuite's `chain weather_agent` around a LangGraph `StateGraph`'s nodes), names the graph.
A run whose reader named no agent, on a span its framework's metadata marks as an agent's graph,
is named as its span is: LangChain names a graph's span after the graph. Any other such run, but
a conversation named after its turns, is named by the keys and span-name forms every convention
shares when its span holds one (`named_by_keys`, asked by `run_parts`), else as its span is when
that span recorded the run's request (`recorded_units.names_its_unit`).
"""

from __future__ import annotations

from otel_scorers.conventions.base import NAME_KEYS
from otel_scorers.conventions.formats import langchain
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.genai import agent_named
from otel_scorers.conventions.inferred_kinds import ANY_RUN_KIND, normalised
from otel_scorers.conventions.labelled_names import labelled_name
from otel_scorers.gen_ai_names import GEN_AI_OPERATION_NAME
from otel_scorers.span_record import SpanRecord


def agent_name(span: SpanRecord, read: str | None) -> str | None:
    """The agent's name: what the span's reader read, unless that is only the span's own name
    (the reader's last resort) or a run's kind, which the keys and span-name forms every
    convention shares may say better. A reader that read no name meant none (a conversation named after its turns)."""
    if read is None:
        # An agent graph its framework's metadata marks is named as its span is (LangChain names
        # a graph's span after the graph), by whichever reader it was read.
        return span.name if span.name and langchain.marks_agent_graph(span) else None
    if read != span.name and normalised(read) not in ANY_RUN_KIND:
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
    return agent_named(span.name) or labelled_name(span.name)


#: How a graph's messages state begins, as JSON (`{"messages": [...]}`): a LangGraph graph's input.
_MESSAGES_STATE = '{"messages"'


def graph_name(span: SpanRecord) -> str | None:
    """The graph a span of its run names: the span holds a graph's messages state as an attribute
    and is named `{gen_ai.operation.name} {name}`; None for any other span."""
    attributes = span.attributes
    operation = attributes.get(GEN_AI_OPERATION_NAME)
    if not isinstance(operation, str) or not span.name.startswith(operation + " "):
        return None
    if not any(
        type(value) is str and value.startswith(_MESSAGES_STATE) and _holds_messages(value)
        for value in attributes.values()
    ):
        return None
    return span.name[len(operation) + 1 :] or None


def _holds_messages(value: str) -> bool:
    """The JSON object holds a list of messages (a state), not their type (a component's
    declared inputs, `{"messages": "list[ChatMessage]"}`)."""
    decoded = decode_json(value)
    return isinstance(decoded, dict) and isinstance(decoded.get("messages"), list)
