"""How an inferred vocabulary names its runs' agent beyond a name key (`inferred.py`).

A tracer of any code may name a run's span after the method it traced (`ReAct.forward`): the
agent is the object before the method. The run's recorded output may hold the agent's name in a
field named for it (`{"result": {"current_agent_name": "weather_agent"}}`): that names it before
the span's name does. A run span's name that only says its kind (`spring_ai chat_client`) names
no agent; a key whose last part is `name` after a run's kind (`acme:flow:name`) names the run a
span is in, not the span. The name keys every reader shares (`gen_ai.agent.name`) may name, on a
tracer's every span, the step of a graph it ran in (a node): on the run span they then name
another span of its trace, which names itself so, not the run's agent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from otel_scorers.conventions.base import NAME_KEYS
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.inferred_kinds import ANY_RUN_KIND, normalised
from otel_scorers.span_record import SpanRecord

#: What separates the parts of a key (`acme.span.type`, `genkit:metadata:flow:name`).
SEPARATORS = re.compile(r"[.:]")
_WORDS = re.compile(r"[\s.:/]+")
#: The deepest a step is looked for inside the span around it.
_MAX_DEPTH = 16
#: A span named after the method a tracer traced: the object's class or name, then the method.
_TRACED_METHOD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[a-z_]+)$")


def traced_methods(runs: Sequence[SpanRecord]) -> tuple[str, ...]:
    """The methods the run spans are named after (`.forward` of `ReAct.forward`), when each is
    named so: a run is named by the object before it; otherwise none."""
    found = [_TRACED_METHOD.match(span.name) for span in runs]
    return tuple(sorted({match.group(1) for match in found if match})) if all(found) else ()


def recorded_name(runs: Sequence[SpanRecord], output: str) -> str | None:
    """The path of a field named for the agent's name (`agent_name`, `current_agent_name`) in the
    output every run span recorded, at its top or one level down; None when there is none."""
    paths: set[str] | None = None
    for span in runs:
        value = decode_json(span.attributes.get(output))
        found = set(_name_paths(value, "")) if isinstance(value, dict) else set()
        for inner_key, inner in value.items() if isinstance(value, dict) else ():
            if isinstance(inner, dict):
                found.update(_name_paths(inner, f"{inner_key}."))
        paths = found if paths is None else paths & found
        if not paths:
            return None
    return min(paths) if paths else None


def _name_paths(value: dict[str, Any], prefix: str) -> Iterator[str]:
    for key, inner in value.items():
        if isinstance(inner, str) and inner and key.lower().endswith("agent_name") and "." not in key:
            yield prefix + key


def labels_kind(name: str, runs: frozenset[str]) -> bool:
    """The span's name only says the kind (`spring_ai chat_client`, `agent`), not which agent."""
    return any(word in runs for word in _WORDS.split(name.lower().replace("-", "_")))


def not_naming_runs(keys: frozenset[str]) -> frozenset[str]:
    """The keys but those naming the run a span is part of (`names_a_run`): a call's own name, and
    a run's, are looked for among these first."""
    return frozenset(key for key in keys if not names_a_run(key))


def names_a_run(key: str) -> bool:
    """The key names the run a span is part of: its last part `name`, the one before a run's kind
    (`acme:metadata:flow:name` on a flow's tool span, and on a flow run inside another flow)."""
    parts = SEPARATORS.split(key)
    return len(parts) >= 2 and parts[-1].lower() == "name" and normalised(parts[-2]) in ANY_RUN_KIND


def name_keys_name_steps(spans: Sequence[SpanRecord]) -> bool:
    """The name keys every reader shares (`NAME_KEYS`) name, on a vocabulary's spans, the step of
    its work each ran in rather than an agent: each span holding one is that step's, named so
    (`model` naming itself), or is in it (the model call inside the node `model`), or is around it
    (`gen_ai.agent.name = model` on the graph's span around its node `model`), as one span is."""
    named: dict[int, tuple[SpanRecord, str]] = {}
    for span in spans:
        attributes = span.attributes
        if NAME_KEYS[0] in attributes or NAME_KEYS[1] in attributes:  # most spans: neither, two lookups
            name = _key_name(attributes)
            if name is not None:
                named[span.span_id] = (span, name)
    if not named:
        return False
    steps = {span.name: span for span, name in named.values() if span.name == name}
    if not all(name in steps for _, name in named.values()):
        return False
    return any(
        span.name != name and _inside(steps[name], span.span_id, named) for span, name in named.values()
    )


def _inside(span: SpanRecord, outer: int, spans: dict[int, tuple[SpanRecord, str]]) -> bool:
    """Whether `span` is inside the span `outer`, through spans among `spans`."""
    parent = span.parent_span_id
    for _ in range(_MAX_DEPTH):
        if parent is None or parent not in spans:
            return False
        if parent == outer:
            return True
        parent = spans[parent][0].parent_span_id
    return False


def _key_name(attributes: Mapping[str, Any]) -> str | None:
    for key in NAME_KEYS:
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None
