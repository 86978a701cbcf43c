"""Runs of a vocabulary nobody described whose kind key names no run: the spans that record an
agent's definition as their input (`inferred.py` asks when no kind key names runs and calls).

A tracer may say what a span is in a key of its own whose values name a tool call or a model call,
and anything else by one catch-all value (`DEFAULT`); an agent's run is then a span of that value
whose input (the key under the kind key's prefix that holds it, `<prefix>input`) is the agent's
definition: an object naming the agent (`name`) and listing its tools (`tools`). Such spans are
runs when each has a model or tool span (of any reader) under it; the agent's name is the one its
definition holds, its request and answer its model calls'. A tool call is a span of the kind key's
tool value, its arguments and result under the same prefix; one carrying a key that names the
agent it hands the conversation to (`<prefix>handoff.to`) is a handoff. Decided per trace, from
the spans no reader gave a role that carry a key named as a kind key (`inferred.py` finds them
while reading kind values): a trace without one pays nothing more.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from otel_scorers.conventions.described import DescribedConvention
from otel_scorers.conventions.description import ConventionDescription
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.inferred_description import INFERRED, TAILS, last_part, longest_prefix
from otel_scorers.conventions.inferred_handoffs import HANDOFF_TO
from otel_scorers.conventions.inferred_kinds import TOOL_KINDS, normalised
from otel_scorers.span_record import SpanRecord

#: The last part of a key that holds a span's input, and of one that holds a tool's result.
_INPUT_TAILS = frozenset(TAILS["input"])
_OUTPUT_TAILS = frozenset((*TAILS["output"], *TAILS["result"]))
_MAX_REMEMBERED = 64
_MAX_REMEMBERED_KEYS = 4096
#: The keys that may hold a span's input, by the keys of a kind of span.
_input_keys_of: dict[tuple[str, ...], tuple[str, ...]] = {}
#: The readers inferred so, by what they were inferred from.
_readers: dict[tuple[Any, ...], DescribedConvention | None] = {}


def _definition(value: Any) -> bool:
    """The value is an agent's definition: an object with a `name` text and a `tools` list."""
    if type(value) is not str or value[:1] != "{" or '"tools"' not in value:
        return False
    decoded = decode_json(value)
    return (
        isinstance(decoded, dict)
        and isinstance(decoded.get("name"), str)
        and isinstance(decoded.get("tools"), list)
    )


def _input_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    """Those of `keys` (a kind of span's) that may hold its input, remembered per kind of span."""
    found = _input_keys_of.get(keys)
    if found is None:
        found = tuple(key for key in keys if last_part(key) in _INPUT_TAILS)
        if len(_input_keys_of) < _MAX_REMEMBERED_KEYS:
            _input_keys_of[keys] = found
    return found


def _defining(spans: Sequence[SpanRecord]) -> tuple[str, list[SpanRecord]] | None:
    """The key holding an agent's definition on some of `spans` (one key for all), with those spans."""
    found: dict[str, list[SpanRecord]] = {}
    for span in spans:
        attributes = span.attributes
        for key in _input_keys(tuple(attributes)):
            if _definition(attributes[key]):
                found.setdefault(key, []).append(span)
    if len(found) != 1:
        return None
    return next(iter(found.items()))


def defined_runs_reader(
    spans: Sequence[SpanRecord],
    kind_keys_in: Callable[[SpanRecord], list[str]],
    works: Callable[[Collection[int]], bool],
) -> DescribedConvention | None:
    """The reader of these spans (one trace's, none with a role) whose runs record their agent's
    definition, or None when none does, or the runs' kind key is not one value on them all, or a
    run has no model or tool span under it. `kind_keys_in` gives a span's keys that may say its
    kind."""
    defining = _defining(spans)
    if defining is None:
        return None
    input_key, runs = defining
    keys = [key for key in kind_keys_in(runs[0]) if input_key.startswith(longest_prefix(key))]
    run_values = {span.attributes.get(key) for key in keys[:1] for span in runs}
    if not keys or len(run_values) != 1 or not works({span.span_id for span in runs}):
        return None
    key, run_value = keys[0], next(iter(run_values))
    tools = [span for span in spans if normalised(span.attributes.get(key)) in TOOL_KINDS]
    tool_values = sorted({str(span.attributes[key]) for span in tools})
    prefix = longest_prefix(input_key)
    outputs = sorted(
        k for span in tools for k in span.attributes if k.startswith(prefix) and last_part(k) in _OUTPUT_TAILS
    )
    handoff = min((k for span in tools for k in span.attributes if HANDOFF_TO.search(k)), default=None)
    signature = (key, run_value, input_key, tuple(tool_values), tuple(outputs[:1]), handoff)
    if signature in _readers:
        return _readers[signature]
    reader = DescribedConvention(
        _description(key, str(run_value), input_key, tool_values, outputs[:1], handoff)
    )
    if len(_readers) < _MAX_REMEMBERED:
        _readers[signature] = reader
    return reader


def _description(
    key: str, run_value: str, input_key: str, tool_values: list[str], outputs: list[str], handoff: str | None
) -> ConventionDescription:
    run = {
        "when": {"attributes": {key: [run_value]}, "holds": {"attribute": input_key, "path": "tools"}},
        "agent_name": [{"attribute": input_key, "path": "name"}, {"span": "name"}],
    }
    document: dict[str, Any] = {"name": f"{INFERRED}{key}", "marker_attributes": [key], "run": run}
    if handoff is not None:  # a call handing the conversation to another agent, named in it
        document["handoff"] = {"when": {"attributes": {handoff: "*"}}, "target": handoff}
    if tool_values:
        tool: dict[str, Any] = {"when": {"attributes": {key: tool_values}}, "name": {"span": "name"}}
        tool["arguments"] = {"attribute": input_key, "json_value": True}
        if outputs:
            tool["result"] = {"attribute": outputs[0], "json_value": True}
        document["tool"] = tool
    return ConventionDescription.model_validate(document)
