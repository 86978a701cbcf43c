"""The description of a vocabulary inferred from a trace (`inferred.py`): where its kind key's
values put each span (run, tool call, model call), and the keys under the kind key's prefix, or
under a kind's own value, that hold each part (input, output, name, a tool's arguments, result
and failure, a model's name, a conversation id), as a `conventions:` description would say them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from otel_scorers.conventions.description import ConventionDescription
from otel_scorers.conventions.inferred_flat import preferred_source
from otel_scorers.conventions.inferred_kinds import (
    CHAIN_KINDS,
    MODEL_KINDS,
    RUN_KINDS,
    TOOL_KINDS,
    normalised,
)
from otel_scorers.conventions.inferred_messages import genai_message_source, message_sources
from otel_scorers.conventions.inferred_names import SEPARATORS, not_naming_runs

#: The GenAI conventions' namespace, as a prefix.
GEN_AI_PREFIX = "gen_ai."
#: The generic bare key of what a run span gave (`runs/generic_io.py` reads it for every reader).
GENERIC_OUTPUT = "output"
#: The name of an inferred description starts so; the kind key follows.
INFERRED = "inferred:"
#: Where each part is kept, by the key's tail after the prefix (lower case, without `.`, `:`,
#: `_`), in order of preference: the whole tail, else its last part.
TAILS: dict[str, tuple[str, ...]] = {
    "input": ("input", "inputs", "spaninputs", "inputvalue", "request"),
    "output": ("output", "outputs", "spanoutputs", "outputvalue", "response"),
    "name": ("name", "agentname"),
    "arguments": ("arguments", "args", "input", "inputs", "spaninputs", "inputvalue"),
    "result": ("result", "output", "outputs", "spanoutputs", "outputvalue"),
    "model": ("modelname", "model", "requestmodel"),
    "conversation": ("conversationid", "sessionid", "threadid"),
    "error": ("statusmessage", "errormessage", "error"),
}


def _squeezed(text: str) -> str:
    return text.lower().replace(".", "").replace(":", "").replace("_", "")


def prefixes(key: str) -> list[str]:
    """Each leading part of `key` with its separator, longest first, then none (the bare keys):
    `a.b.kind` -> `a.b.`, `a.`, `` (without `.` or `:`, at its underscores: `acme_event_type` ->
    `acme_event_`, `acme_`, ``). Not `gen_ai.`: the GenAI keys there mean what the conventions
    say (`gen_ai.provider.name` names no agent), for a kind key of a tracer's own under it."""
    found = list(SEPARATORS.finditer(key)) or list(re.finditer("_", key))
    leading = [key[: match.end()] for match in reversed(found)]
    if leading and leading[-1] == GEN_AI_PREFIX:
        leading.pop()
    return [*leading, ""]


def longest_prefix(key: str) -> str:
    """The first of `prefixes(key)`, or empty for a key of one part."""
    found = prefixes(key)
    return found[0] if found else ""


def last_part(key: str) -> str | None:
    """The key's last part after a `.` or `:` as tails are compared (`TAILS`), or None for a key
    without either: `input` of `acme.span.Input`, `spaninputs` of `mlflow:span_inputs`."""
    return _squeezed(SEPARATORS.split(key)[-1]) if SEPARATORS.search(key) else None


def source_key(prefix_list: list[str], keys: frozenset[str], part: str) -> str | None:
    """The key among `keys` under the longest prefix whose tail says it holds `part`."""
    for prefix in prefix_list:
        tails: dict[str, str] = {}
        for key in sorted(keys):
            if key.startswith(prefix) and len(key) > len(prefix):
                tail = key[len(prefix) :]
                tails.setdefault(_squeezed(tail), key)
                if prefix:  # outside any prefix, only a key that is all one name (`session.id`)
                    tails.setdefault("last:" + _squeezed(SEPARATORS.split(tail)[-1]), key)
        for wanted in TAILS[part]:
            found = tails.get(wanted) or tails.get("last:" + wanted)
            if found is not None:
                return found
    return None


def _record(prefix_list: list[str], keys: frozenset[str], part: str) -> dict[str, Any] | None:
    """The source of `part` (`inferred_flat.preferred_source`): its key, whole tail or last part."""
    key = source_key(prefix_list, keys, part)
    whole = key is not None and any(
        key.startswith(p) and _squeezed(key[len(p) :]) in TAILS[part] for p in prefix_list
    )
    return preferred_source(key, whole, prefix_list, keys, part)


def inferred_description(
    key: str,
    raw_values: Iterable[str],
    keys: dict[str, frozenset[str]],
    json_values: bool,
    names_label: bool,
    calls_apart: tuple[str | None, str | None] = (None, None),
    methods: tuple[str, ...] = (),
    named: tuple[str, str | None] | None = None,
    chain_runs: bool = False,
    top: tuple[str, ...] = (),
    records: dict[str, dict[str, Any]] | None = None,
    name_keys: bool = True,
    handoff: dict[str, Any] | None = None,
) -> ConventionDescription | None:
    """The description of the vocabulary whose kind key is `key`: `raw_values` its values as
    written, `keys` the attribute keys on the spans of each kind (run, tool, model). With
    `calls_apart` (the key naming the calls, and a key on every run span and no call's), the
    calls' kinds are read from the first, and a run is a span of a run kind carrying the second.
    `records`: per kind, the sources of parts no key under the prefix holds (`inferred_records`).
    `name_keys` False: the name keys every reader shares name a step, not the run's agent.
    `handoff`: how a span handing the conversation to another agent is read (`inferred_handoffs`)."""
    call_key, only = calls_apart
    records = records or {}
    in_records = records.get("run", {})
    by_kind = _values_by_role(raw_values, json_values, chain_runs)
    under = prefixes(key)
    run_keys = keys["run"]
    run_when: dict[str, Any] = {key: by_kind["run"], **({only: "*"} if only else {})}
    run: dict[str, Any] = {"when": {"attributes": run_when}} if by_kind["run"] else {}
    if names := _agent_names(under, run_keys, in_records, named, None if names_label else methods):
        run["agent_name"] = names
    if not name_keys:
        run["name_keys"] = False
    for part in ("input", "output"):
        if (source := _record(under, run_keys, part)) is not None:  # JSON texts decoded, records whole
            run[part] = source
        elif part in in_records:
            run[part] = in_records[part]
    conversation = source_key([*under, ""], run_keys, "conversation")
    if conversation is not None:
        run["conversation_id"] = conversation
    # An untyped unit of work at the top (`inferred_tops`) is the vocabulary's by its input's key.
    document: dict[str, Any] = {"name": f"{INFERRED}{key}", "marker_attributes": [key, *top], "run": run}
    document["json_values"] = json_values
    if handoff is not None:  # a span handing the conversation to another run's agent
        document["marker_attributes"].extend(handoff["when"].get("attributes", ()))
        document["handoff"] = handoff
    for role in ("tool", "model"):
        if by_kind[role]:
            document[role] = _call(role, call_key or key, by_kind[role], keys[role], records.get(role, {}))
    return ConventionDescription.model_validate(document)


def _agent_names(
    under: list[str],
    run_keys: frozenset[str],
    in_records: dict[str, Any],
    named: tuple[str, str | None] | None,
    methods: tuple[str, ...] | None,
) -> list[Any]:
    """Where a run's agent is named: its own name key, before one kept under a run's kind
    (`acme:flow:name`: the run it is in), else its records'; the name its run recorded (`named`);
    the span's name when labels do not name the kind (`methods` not None), a traced method's
    (`ReAct.forward`) naming its object."""
    name = source_key([*under, ""], not_naming_runs(run_keys), "name") or source_key(
        [*under, ""], run_keys, "name"
    )
    names: list[Any] = [name or in_records["name"]] if name or "name" in in_records else []
    if named is not None and named[1] is not None:
        names.append({"attribute": named[0], "path": named[1], "json_value": True})
    if methods is not None:
        names.append({"span": "name", "strip_suffix": list(methods)} if methods else {"span": "name"})
    return names


def _values_by_role(raw_values: Iterable[str], json_values: bool, chain_runs: bool) -> dict[str, list[str]]:
    """The kind key's values as written (JSON quotes off), by the role of the spans they mark:
    a run's (the first tier present; `chain` with `chain_runs`), a tool's, a model call's."""
    by_kind: dict[str, list[str]] = {"run": [], "tool": [], "model": []}
    runs_tier = next(
        (tier for tier in RUN_KINDS if any(normalised(value) in tier for value in raw_values)),
        CHAIN_KINDS if chain_runs else frozenset(),
    )
    for value in sorted(raw_values):
        kind = normalised(value)
        if kind in runs_tier:
            role = "run"
        elif kind in TOOL_KINDS:
            role = "tool"
        elif kind in MODEL_KINDS:
            role = "model"
        else:
            continue
        by_kind[role].append(value[1:-1] if json_values else value)
    return by_kind


def _call(
    role: str, key: str, values: list[str], keys: frozenset[str], records: dict[str, Any]
) -> dict[str, Any]:
    """A tool's or a model call's part of the description: its kind's values of `key`, and the
    keys on its spans under its kind's own value (`tool.name`, `llm.model`), else under each
    leading part of `key`."""
    under = [
        *dict.fromkeys(f"{name}." for value in values for name in (value, value.lower())),
        *prefixes(key),
    ]
    found: dict[str, Any] = {"when": {"attributes": {key: values}}}
    # A name kept under a run's kind (`acme:metadata:flow:name`) names the run the call is in.
    keys = not_naming_runs(keys)
    if role == "tool":
        tool_name = source_key([*under, ""], keys, "name") or records.get("name")
        found["name"] = [tool_name, {"span": "name"}] if tool_name else [{"span": "name"}]
        for part in ("arguments", "result"):
            if (source := _record(under, keys, part)) is not None:
                found[part] = source
            elif part in records:
                found[part] = records[part]
        error = source_key(under, keys, "error")  # a failure's message says the call failed
        if error is not None:
            found["error"] = {"attribute": error, "json_value": True}
        return found
    for part in ("input", "output"):
        sources = message_sources(source_key(under, keys, part), part) or genai_message_source(keys, part)
        if sources is not None:
            found[part] = sources
    model_name = source_key(under, keys, "model") or source_key(under, keys, "name") or records.get("model")
    if model_name is not None:
        found["model"] = model_name
    return found
