"""How an inferred vocabulary names its runs' agent beyond a name key (`inferred.py`).

A tracer of any code may name a run's span after the method it traced (`ReAct.forward`): the
agent is the object before the method. The run's recorded output may hold the agent's name in a
field named for it (`{"result": {"current_agent_name": "weather_agent"}}`): that names it before
the span's name does. A run span's name that only says its kind (`spring_ai chat_client`) names
no agent; a key whose last part is `name` after a run's kind (`acme:flow:name`) names the run a
span is in, not the span.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from otel_scorers.conventions.formats.messages import decode_json
from otel_scorers.conventions.inferred_kinds import ANY_RUN_KIND, normalised
from otel_scorers.span_record import SpanRecord

#: What separates the parts of a key (`acme.span.type`, `genkit:metadata:flow:name`).
SEPARATORS = re.compile(r"[.:]")
_WORDS = re.compile(r"[\s.:/]+")
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
