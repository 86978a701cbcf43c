"""Runs told from their steps by a second kind key.

Some frameworks write the key that names an agent run on every span of the agent's work, its
steps too (`entity.type = agent` on the agent's span, its model calls, its tool calls, its
memory reads), and say each step's kind in another key (`span.type`: `llm`, `tool`, `memory`).
The inference (`inferred.py`) then reads the calls' kinds from that key, and a run is a span of
a run kind that key does not mark, told from its steps by a key every run span carries and no
step does; without such a key, nothing is read (a wrong run is worse than none).

Spans of a run kind side by side that an agent's name comes back to (A, B, A) are the turns of a
conversation between agents, not runs: nothing is read either.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from otel_scorers.conventions.inferred_kinds import ANY_RUN_KIND, MODEL_KINDS, TOOL_KINDS, normalised
from otel_scorers.span_record import SpanRecord


def call_key_apart(values: dict[str, Counter[str]], run_key: str) -> str | None:
    """Another kind key naming tools or model calls and no run: where the key naming runs is on
    every span of an agent's work (its calls too), the kind of each call is said by this one."""
    found = [
        (sum(counts.values()), key)
        for key, counts in values.items()
        if key != run_key
        and not ANY_RUN_KIND & counts.keys()
        and any(kind in TOOL_KINDS or kind in MODEL_KINDS for kind in counts)
    ]
    return max(found)[1] if found else None


def spans_of_each_kind(
    carrying: Sequence[SpanRecord], key: str, runs: frozenset[str], call_key: str | None
) -> dict[str, list[SpanRecord]]:
    """The spans of a run, a tool and a model kind: with a key naming the calls apart, which marks
    each step of a run (a call, a memory read), a run's are those of a run kind it does not mark."""
    calls = call_key or key
    kinds = {
        kind: [span for span in carrying if normalised(span.attributes.get(calls)) in kinds_of]
        for kind, kinds_of in (("tool", TOOL_KINDS), ("model", MODEL_KINDS))
    }
    kinds["run"] = [
        span
        for span in carrying
        if normalised(span.attributes[key]) in runs and (call_key is None or call_key not in span.attributes)
    ]
    return kinds


def key_of_runs_alone(
    runs: Sequence[SpanRecord], carrying: Sequence[SpanRecord], call_key: str | None
) -> str | None:
    """A key every run span carries and no span `call_key` marks: what tells a run from its steps
    when the kind key's value is the same on both; None when no key does."""
    if call_key is None or not runs:
        return None
    shared = frozenset(runs[0].attributes).intersection(*(span.attributes for span in runs[1:]))
    for span in carrying:
        if call_key in span.attributes:
            shared = shared - span.attributes.keys()
    return min(shared) if shared else None


def turns_of_a_conversation(runs: Sequence[SpanRecord]) -> bool:
    """Spans of a run kind side by side that an agent's name comes back to after another's
    (A, B, A): the turns of a conversation between agents, not invocations; which of them is
    the run the trace does not say, so none is read."""
    siblings: dict[int | None, list[SpanRecord]] = {}
    for span in runs:
        siblings.setdefault(span.parent_span_id, []).append(span)
    for group in siblings.values():
        if len(group) < 3:
            continue
        seen: set[str] = set()
        last = None
        for span in sorted(group, key=lambda span: span.start_ns):
            if span.name != last:
                if span.name in seen:
                    return True
                seen.add(span.name)
                last = span.name
    return False
