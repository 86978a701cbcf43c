"""A vocabulary nobody described that says each span's kind in its name, not in a key
(`inferred.py` asks when no key on the spans says their kind).

A tracer may name its spans by dotted paths whose last part names the kind of work
(`acme.agent.step.llm`, `acme.agent.step.tool`) or, before an act, the kind invoked
(`acme.agent.run`), and keep a span's input and output in keys under its name (`<name>.input`,
`<name>.output`) or, for an act, under the name less the act (`acme.agent.input`). A run is a
span so named for an agent (not for a `workflow`, a name too many wrappers bear); it is believed when calls are so named beside it or a model or tool
span (of any reader) is under each run. Each part is read from the key under the span's prefix
whose last part says it holds that part; a tool's name from a key naming it beside a tool kind
(`acme.tool.name`). The agent's name is the one a typed entity on the run's span gives
(`inferred_records.typed_name`), else the one the span around it gives: a typed entity naming an
agent there (`acme.component.name` beside `acme.component.type = Agent`), or the tool that runs
it; else the class of the object the run span's name says ran (`acme.agent.run`: an `Agent`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import lru_cache
from typing import Any

from otel_scorers.conventions.described import DescribedConvention
from otel_scorers.conventions.description import ConventionDescription
from otel_scorers.conventions.inferred_description import TAILS
from otel_scorers.conventions.inferred_kinds import ACTS, ANY_RUN_KIND, KINDS, RUN_KINDS, TOOL_KINDS
from otel_scorers.conventions.inferred_records import typed_name
from otel_scorers.conventions.inferred_steps import turns_of_a_conversation
from otel_scorers.span_record import SpanRecord

#: A span name of dotted lower-case words, possibly written as a call (`acme.agent.run()`).
_DOTTED = re.compile(r"^[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+(?:\(\))?$")
#: The rest of a key under a name's prefix that holds what a span was given, what it gave: a
#: run's or a model call's input and output, else a tool call's arguments and result (`TAILS`).
_TAILS = {
    side: tuple(dict.fromkeys((*TAILS[side], *TAILS[call])))
    for side, call in (("input", "arguments"), ("output", "result"))
}
_MAX_REMEMBERED = 64
_readers: dict[tuple[Any, ...], DescribedConvention | None] = {}


@lru_cache(maxsize=4096)
def name_kind(name: str) -> tuple[str, str] | None:
    """The role a span's name says (`run`, `tool`, `model`) and the prefix of its keys, or None:
    `acme.agent.step.llm` a model call (keys under `acme.agent.step.llm.`), `acme.agent.run` a run
    (keys under `acme.agent.`)."""
    if len(name) > 80 or _DOTTED.match(name) is None:
        return None
    bare = name.removesuffix("()")
    parts = bare.split(".")
    kind, prefix = parts[-1], bare + "."
    if parts[-1] in ACTS:
        kind, prefix = parts[-2], bare[: -len(parts[-1])]
    if kind not in KINDS or (kind in ANY_RUN_KIND and kind not in RUN_KINDS[0]):
        return None  # a name saying `workflow` says too little: an agent's run is named so
    role = "run" if kind in ANY_RUN_KIND else "tool" if kind in TOOL_KINDS else "model"
    return role, prefix


@lru_cache(maxsize=4096)
def _names_run(name: str) -> bool:
    """The span's name names a run (`name_kind`): asked of every name of a trace without a run."""
    found = name_kind(name)
    return found is not None and found[0] == "run"


def _class_named(name: str) -> str | None:
    """The class of the object a run span's name says ran, before its act (`acme.agent.run`: an
    `Agent`), as classes are named; None for a name without an act."""
    parts = name.removesuffix("()").split(".")
    return parts[-2].title().replace("_", "") if len(parts) >= 3 and parts[-1] in ACTS else None


def _key(spans: Sequence[SpanRecord], prefix: str, tails: Sequence[str]) -> str | None:
    """The key under `prefix`, on the spans, whose rest is one of `tails` (the first found)."""
    found = {key[len(prefix) :]: key for span in spans for key in span.attributes if key.startswith(prefix)}
    return next((found[tail] for tail in tails if tail in found), None)


def _tool_name_key(spans: Sequence[SpanRecord]) -> str | None:
    """A key on every tool span naming it beside a tool kind (`acme.tool.name`)."""
    shared = frozenset(spans[0].attributes).intersection(*(span.attributes for span in spans[1:]))
    named = [key for key in shared if re.search(r"(?:^|\.)(?:tool|function)[._]name$", key)]
    return min(named) if named else None


def span_names_reader(
    spans: Sequence[SpanRecord], works: Callable[[Collection[int]], bool]
) -> DescribedConvention | None:
    """The reader of the vocabulary these spans' names say (one trace's, none with a role), or
    None when their names name no run, or the runs are believed neither by calls named beside
    them nor by model or tool spans under them."""
    names = {span.name for span in spans}
    if not any(map(_names_run, names)):
        return None  # most traces: one look at each name, none names a run
    said = {name: found for name in names if (found := name_kind(name)) is not None}
    kinds: dict[str, dict[str, list[SpanRecord]]] = {"run": {}, "tool": {}, "model": {}}
    for span in spans:
        found = said.get(span.name)
        if found is not None:
            kinds[found[0]].setdefault(span.name, []).append(span)
    runs = [span for group in kinds["run"].values() for span in group]
    if not runs or turns_of_a_conversation(runs):
        return None
    if not kinds["tool"] and not kinds["model"] and not works({span.span_id for span in runs}):
        return None
    by_id = {span.span_id: span for span in spans}
    parents = [by_id[span.parent_span_id] for span in runs if span.parent_span_id in by_id]
    tools = [span for group in kinds["tool"].values() for span in group]
    tool_name = _tool_name_key(tools) if tools else None
    within = [
        key
        for key in (typed_name(parents[:1], ANY_RUN_KIND), tool_name)
        if key is not None and any(key in parent.attributes for parent in parents)
    ]
    signature = (
        tuple((role, tuple(sorted(names))) for role, names in kinds.items()),
        typed_name(runs, ANY_RUN_KIND),
        tuple(within),
        tool_name,
        *(frozenset(k for span in group for k in span.attributes) for group in kinds["run"].values()),
    )
    if signature in _readers:
        return _readers[signature]
    suffixes = sorted({"." + span.name.rsplit(".", 1)[-1] for span in (*runs, *parents, *tools)})
    reader = DescribedConvention(_description(kinds, runs, within, tool_name, suffixes))
    if len(_readers) < _MAX_REMEMBERED:
        _readers[signature] = reader
    return reader


def _description(
    kinds: Mapping[str, Mapping[str, list[SpanRecord]]],
    runs: list[SpanRecord],
    within: list[str],
    tool_name: str | None,
    suffixes: list[str],
) -> ConventionDescription:
    names = sorted(kinds["run"])
    run: dict[str, Any] = {"when": {"name_prefix": names}}
    named = typed_name(runs, ANY_RUN_KIND)
    agent_names: list[Any] = [named] if named is not None else []
    classes = {_class_named(name) for name in names}
    if len(classes) == 1 and None not in classes:  # the class of the object that ran, by nothing else
        agent_names.append({"value": classes.pop()})
    if agent_names:
        run["agent_name"] = agent_names
    if within:
        run["name_within"] = within
    document: dict[str, Any] = {"name": f"inferred:{names[0]}", "marker_name_suffix": suffixes, "run": run}
    for part in ("input", "output"):
        sources = [_key(group, name_kind(name)[1], _TAILS[part]) for name, group in kinds["run"].items()]  # type: ignore[index]
        found = [{"attribute": key, "json_value": True} for key in dict.fromkeys(sources) if key]
        if found:
            run[part] = found
    for role, parts in (("tool", ("arguments", "result")), ("model", ("input", "output"))):
        if not kinds[role]:
            continue
        call: dict[str, Any] = {"when": {"name_prefix": sorted(kinds[role])}}
        if role == "tool":
            call["name"] = [tool_name, {"span": "name"}] if tool_name else {"span": "name"}
        for part, side in zip(parts, ("input", "output"), strict=True):
            sources = [_key(group, name_kind(name)[1], _TAILS[side]) for name, group in kinds[role].items()]  # type: ignore[index]
            found = [{"attribute": key, "json_value": True} for key in dict.fromkeys(sources) if key]
            if found:
                call[part] = found
        document[role] = call
    return ConventionDescription.model_validate(document)
