"""Where each convention keeps the id of the conversation a run belongs to.

A convention module reads its own primary key (`gen_ai.conversation.id`, OpenInference's
`session.id`) into `RunSpanContent.conversation_id`; when it found none, these keys of the run
span are read in order, then those of the span wrapping it, then those of its model calls. The
table is the one statement of which framework writes which key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from otel_scorers.conventions.base import RunSpanContent
from otel_scorers.conventions.formats.bounded_json import loads
from otel_scorers.gen_ai_names import GEN_AI_CONVERSATION_ID
from otel_scorers.runs.run_parts import RunParts, content_of

#: (attribute, who writes it). First found wins.
CONVERSATION_KEYS: tuple[tuple[str, str], ...] = (
    (GEN_AI_CONVERSATION_ID, "OpenTelemetry GenAI semantic conventions, Pydantic AI, Mastra, Google ADK"),
    ("session.id", "OpenInference (`using_session`), Strands, Agno"),
    ("traceloop.association.properties.thread_id", "OpenLLMetry over LangGraph (`configurable.thread_id`)"),
    ("traceloop.association.properties.session_id", "OpenLLMetry (`Traceloop.set_association_properties`)"),
    ("ai.telemetry.metadata.sessionId", "Vercel AI SDK (`experimental_telemetry.metadata`)"),
    ("ai.telemetry.metadata.threadId", "Vercel AI SDK (`experimental_telemetry.metadata`)"),
    ("ai.telemetry.metadata.conversationId", "Vercel AI SDK (`experimental_telemetry.metadata`)"),
    ("mastra.metadata.threadId", "Mastra (memory thread)"),
    ("gcp.vertex.agent.session_id", "Google ADK, legacy schema"),
    ("langfuse.session.id", "Langfuse SDKs' attributes"),
)
_KEYS = tuple(key for key, _ in CONVERSATION_KEYS)
#: OpenInference over LangGraph keeps the run's metadata as one JSON object: its thread id.
_METADATA = "metadata"
_METADATA_KEYS = ("thread_id", "session_id", "conversation_id")
#: A tracer of its own keeps the metadata it was given one key per entry (`<tracer>.metadata.thread_id`):
#: an entry named as a conversation's id is one, whichever tracer wrote it (after the keys above).
_METADATA_ENTRIES = tuple(
    f".{_METADATA}.{name}"
    for key in _METADATA_KEYS
    for name in (key, key.split("_")[0] + key.split("_")[1].capitalize())
)


def _as_id(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int)):
        text = str(value).strip()
        return text or None  # bounded where it becomes a turn (`conversation_turns.turn_of`), and counted
    return None


def conversation_id_of(attributes: Mapping[str, Any]) -> str | None:
    """The conversation id a run span's attributes carry under any known key, else None."""
    for key in _KEYS:
        value = attributes.get(key)
        if value is not None:  # most keys are absent: no call for them
            found = _as_id(value)
            if found is not None:
                return found
    metadata = attributes.get(_METADATA)
    if isinstance(metadata, str) and metadata.startswith("{"):
        try:
            metadata = loads(metadata)
        except orjson.JSONDecodeError:  # not JSON, or nested too deep to decode
            return None
    if isinstance(metadata, Mapping):
        for key in _METADATA_KEYS:
            found = _as_id(metadata.get(key))
            if found is not None:
                return found
    return _metadata_entry(attributes)


def _metadata_entry(attributes: Mapping[str, Any]) -> str | None:
    """The id a metadata entry of a tracer's own keys names as the conversation's (`_METADATA_ENTRIES`),
    in the order of `_METADATA_KEYS`."""
    found = [key for key in attributes if key.endswith(_METADATA_ENTRIES)]
    for entry in _METADATA_ENTRIES if found else ():
        for key in found:
            value = _as_id(attributes[key]) if key.endswith(entry) else None
            if value is not None:
                return value
    return None


def run_conversation_id(parts: RunParts, content: RunSpanContent) -> str | None:
    """The conversation the run span says it belongs to (`content` is what it holds), else the
    one the span wrapping it says, else the one its model calls were made in: the GenAI
    conventions put `gen_ai.conversation.id` on model spans too, and an agent span written by
    hand may leave it out."""
    found = content.conversation_id or conversation_id_of(parts.span.attributes)
    wrapper = parts.wrapper
    if found is None and wrapper is not None:
        found = content_of(wrapper).conversation_id or conversation_id_of(wrapper.span.attributes)
    if found is None:
        for _, span in sorted(parts.models, key=lambda pair: pair[1].start_ns):
            found = conversation_id_of(span.attributes)
            if found is not None:
                break
    return found
