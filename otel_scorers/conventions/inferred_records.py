"""Where an inferred vocabulary's spans keep what no key under its kind key's prefix holds
(`inferred.py`): in span events, and in typed entities.

A tracer may keep a span's input and output in events rather than attributes: an event whose
name's last part says which (`data.input`, `data.output`), holding it in an attribute named for it
(`input`, `response`; not `error_code`). A run's input recorded so as a list of texts is
the user's messages so far: the request is the last.

A tracer may name what a span touched in typed entities, a name key beside a type key
(`entity.1.name` beside `entity.1.type`): where the type names the span's kind of work on every
span of that kind (`agent.langgraph` on an agent's run, `tool.langgraph` on a tool's call,
`model.llm.gpt-4o-mini` on a model call), the name key names the agent, the tool, the model.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.inferred_kinds import normalised
from otel_scorers.span_record import SpanRecord

#: A type key of an entity, and the name key beside it: `entity.1.type`, `entity.1.name`.
_TYPE_KEY = re.compile(r"^(.+[.:_])(?:type|kind)$")
_LAST_PART = re.compile(r"[^.:/]+$")


def _squeezed(text: str) -> str:
    return text.lower().replace("_", "").replace("-", "")


def event_source(spans: Sequence[SpanRecord], tails: Iterable[str]) -> dict[str, Any] | None:
    """The event (and its attribute) that holds a part, on most of `spans`: an event whose name's
    last part is one of `tails` (`data.input`), its attribute named by one of them; None when no
    span has one."""
    wanted = tuple(tails)
    counts: dict[str, int] = {}
    attributes: dict[str, set[str]] = {}
    for span in spans:
        for event in span.events:
            last = _LAST_PART.search(event.name)
            if last is None or _squeezed(last.group(0)) not in wanted:
                continue
            counts[event.name] = counts.get(event.name, 0) + 1
            attributes.setdefault(event.name, set()).update(event.attributes)
    if not counts:
        return None
    name = max(sorted(counts), key=counts.__getitem__)
    keys = sorted(attributes[name])
    by_tail = {_squeezed(key): key for key in keys}
    attribute = next((by_tail[tail] for tail in wanted if tail in by_tail), None)
    if attribute is None:
        return None
    return {"event": name, "attribute": attribute, "json_value": True}


def last_of_texts(spans: Sequence[SpanRecord], source: Mapping[str, Any]) -> bool:
    """Whether the value `source` reads (an event's attribute) is, on every span holding it, a
    list of texts: the messages so far, of which a run's request is the last."""
    seen = False
    for span in spans:
        event = next((event for event in span.events if event.name == source["event"]), None)
        if event is None or source["attribute"] not in event.attributes:
            continue
        value = decode_json(event.attributes[source["attribute"]])
        if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
            return False
        seen = True
    return seen


def typed_name(spans: Sequence[SpanRecord], kinds: Collection[str]) -> str | None:
    """The name key of an entity whose type key names one of `kinds` on every one of `spans`
    (`entity.1.name` where `entity.1.type = agent.langgraph`); None when none does. The first
    span's keys give the candidates, the others are asked of them alone."""
    if not spans:
        return None
    attributes = spans[0].attributes
    candidates = []
    for key in attributes:
        if key.endswith(("type", "kind")):
            match = _TYPE_KEY.match(key)
            if match is not None:
                candidates.append((key, match.group(1) + "name"))
    found = [
        name
        for key, name in candidates
        if all(
            normalised(span.attributes.get(key)) in kinds and _names(span.attributes.get(name))
            for span in spans
        )
    ]
    return min(found) if found else None


def _names(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def records_of(kinds: Mapping[str, Sequence[SpanRecord]], tails: Mapping[str, tuple[str, ...]]) -> Any:
    """Per kind of span (`run`, `tool`, `model`), the sources of its parts found in events and
    typed entities (`tails`: the names that say each part), for the parts found so."""
    from otel_scorers.conventions.inferred_kinds import ANY_RUN_KIND, MODEL_KINDS, TOOL_KINDS

    runs, tools, models = kinds["run"], kinds["tool"], kinds["model"]
    found: dict[str, dict[str, Any]] = {
        "run": {
            "name": typed_name(runs, ANY_RUN_KIND),
            "input": event_source(runs, tails["input"]),
            "output": event_source(runs, tails["output"]),
        },
        "tool": {
            "name": typed_name(tools, TOOL_KINDS),
            # A call's record is named as a run's may be (`response`).
            "arguments": event_source(tools, (*tails["arguments"], *tails["input"])),
            "result": event_source(tools, (*tails["result"], *tails["output"])),
        },
        "model": {"model": typed_name(models, MODEL_KINDS)},
    }
    request = found["run"]["input"]
    if request is not None:
        found["run"]["input"] = (
            [{**request, "path": "[-1]"}, request] if last_of_texts(runs, request) else request
        )
    return {kind: {part: source for part, source in parts.items() if source} for kind, parts in found.items()}
