"""Messages a span holds in a key of messages, or as their text alone.

A key the GenAI conventions read for messages may hold, written by an instrumentation of its
own, plain text (OpenLIT's Pydantic AI run span writes the agent's answer so) or a JSON list of
texts (a response's choices: `["It is sunny."]`): each is a message of that text, from the role
the key is read for (the user's request, the agent's answer). The response's text in the GenAI
namespace, as a namespace names its own (`ai.response.text`), holds what a span gave where no
messages key does: on a model call a list of texts, on a run the messages it added, its answer
last.
"""

from __future__ import annotations

from typing import Any

from otel_scorers.conventions.base import Messages
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import genai_messages, is_placeholder

#: The response's text in the GenAI namespace.
RESPONSE_TEXT = "gen_ai.response.text"


def or_plain_text(raw: Any, role: str) -> Messages:
    """The messages `raw` holds; plain text in their place, or a list of texts, is one message
    of each text from `role`. Text that is JSON, or starts as JSON would, is not one."""
    found = genai_messages(raw)
    if found.items or type(raw) is not str or is_placeholder(raw):
        return found
    text = raw.strip()
    # JSON cut short (a size limit) is messages unread, not prose.
    if not text or text[0] in "[{":
        return _texts(text, role, found) if text[:2] == '["' else found
    return Messages(({"role": role, "parts": [{"type": "text", "content": raw}]},), captured=True)


def _texts(text: str, role: str, found: Messages) -> Messages:
    """One message of each text of a JSON list of texts; `found` for any other value."""
    texts = decode_json(text)
    if not isinstance(texts, list) or not texts or not all(type(item) is str for item in texts):
        return found
    return Messages(
        tuple({"role": role, "parts": [{"type": "text", "content": item}]} for item in texts), captured=True
    )
