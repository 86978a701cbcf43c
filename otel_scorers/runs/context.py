"""What grounded a run's answer (`AgentRun.context`): the rules every convention shares.

In order: the system instructions (`gen_ai.system_instructions` on the run span, else on its
first model span that has it, and the `system` messages of the run's input), the documents its
retriever spans returned (in start order), and the results of its tool calls that finished
(in call order). Each item says where it came from. Identical texts are kept once.

A binding may replace it: `context: [...]` (static texts) or `context: <path>` (a path into the
run, such as `attributes.app.context`: a string, or a list of strings, or a JSON list of them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from otel_scorers.conventions.base import Document, Message
from otel_scorers.conventions.formats.bounded_json import within_depth
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import is_placeholder, text_of
from otel_scorers.errors import ConfigError
from otel_scorers.gen_ai_names import GEN_AI_SYSTEM_INSTRUCTIONS
from otel_scorers.model import AgentRun, ContextItem, ToolCall

SYSTEM_INSTRUCTIONS = GEN_AI_SYSTEM_INSTRUCTIONS
#: A tool result longer than this is cut: context goes into judge prompts.
MAX_ITEM_CHARS = 20_000


def run_context(
    run_attributes: Mapping[str, Any],
    model_attributes: Iterable[Mapping[str, Any]],
    input_messages: Sequence[Message],
    retrievals: Iterable[tuple[int, str, Sequence[Document]]],
    tool_calls: Sequence[ToolCall],
) -> tuple[ContextItem, ...]:
    """The context of one run; `retrievals` is (span id, span name, documents) per retriever span."""
    items: list[ContextItem] = []
    seen: set[tuple[str, str]] = set()

    def add(item: ContextItem) -> None:
        if item.text.strip() and (item.kind, item.text) not in seen:
            seen.add((item.kind, item.text))
            items.append(item)

    for text in _instructions(run_attributes.get(SYSTEM_INSTRUCTIONS)):
        add(ContextItem(text, "system_instructions", SYSTEM_INSTRUCTIONS))
    if not items:
        for attributes in model_attributes:
            texts = _instructions(attributes.get(SYSTEM_INSTRUCTIONS))
            for text in texts:
                add(ContextItem(text, "system_instructions", SYSTEM_INSTRUCTIONS))
            if texts:
                break
    for message in input_messages:
        if message.get("role") == "system":
            add(ContextItem(text_of(message), "system_instructions", "system message"))
    for span_id, span_name, documents in retrievals:
        for position, document in enumerate(documents):
            source = document.id or f"{span_name}[{position}]"
            add(ContextItem(document.text[:MAX_ITEM_CHARS], "document", source, span_id))
    for call in tool_calls:
        if call.state in ("ok", "result_error") and call.result is not None:
            add(ContextItem(_as_text(call.result)[:MAX_ITEM_CHARS], "tool_result", call.name))
    return tuple(items)


def _instructions(value: Any) -> list[str]:
    """`gen_ai.system_instructions`: a JSON list of parts (`{"type": "text", "content": ...}`)
    or plain text."""
    if value is None or is_placeholder(value):
        return []
    decoded = decode_json(value)
    if isinstance(decoded, list):
        texts = []
        for part in decoded:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping):
                text = part.get("content", part.get("text"))
                if isinstance(text, str) and not is_placeholder(text):
                    texts.append(text)
        return texts
    if isinstance(decoded, str):
        return [decoded]
    return [value] if isinstance(value, str) else []


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(within_depth(value), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


# ---- a binding's own context ----------------------------------------------------------------

ContextOverride = Callable[[AgentRun], "tuple[ContextItem, ...] | None"]


def context_override(spec: Any, path: str = "context") -> ContextOverride:
    """What a binding's `context:` says: a list of texts (static), or a path into the run.
    A path that holds nothing usable for a run gives None: the run keeps its own context."""
    from otel_scorers.runs.paths import path_getter

    if isinstance(spec, str):
        getter = path_getter(spec, path)
        source = spec

        def from_run(run: AgentRun) -> tuple[ContextItem, ...] | None:
            texts = _texts(getter(run))
            return None if texts is None else tuple(ContextItem(t, "given", source) for t in texts)

        return from_run
    if isinstance(spec, Sequence) and all(isinstance(text, str) for text in spec):
        static = tuple(ContextItem(text, "given", "config") for text in spec)
        return lambda run: static
    raise ConfigError(path, "context is a list of texts or a path into the run (attributes.<key>)")


def _texts(value: Any) -> list[str] | None:
    value = decode_json(value) if isinstance(value, str) else value
    if isinstance(value, str):
        return [value] if value.strip() else None
    if isinstance(value, (list, tuple)) and all(isinstance(text, str) for text in value):
        return [text for text in value if text.strip()] or None
    return None
