"""Version drifts of real traces: the same runs, each fact kept slightly elsewhere than where the
readers look, as the next release or another runtime of a framework keeps it.

Each drift rewrites an OTLP/JSON trace file span by span. Where a fact is is found by the run
builder's own reading of the plain trace (`span_roles`, then the span's reader: its tool call, its
run content), so a drift moves only what it knows the readers found there, and never loses it:
the moved fact is still in the span, whole, so the generator's truth stays the truth.

- `kind-version`: a kind value gains a version suffix (`tool` -> `tool.v2`, `"AGENT"` ->
  `"AGENT.v2"`, `execute_tool` -> `execute_tool.v2`) on the spans that play a role.
- `wrapped-result`: a tool's result is wrapped in an object (`{"result": ...}`, every other call
  `{"output": ...}`).
- `generic-io`: a tool's arguments and result are kept only in the generic `input.value` /
  `output.value` instead of the key its reader reads.
- `recorded-call`: a call is recorded as a function's (`{"args": [...], "kwargs": {...}}`): a run's
  text request as its one positional argument, a tool's arguments as keyword arguments.
- `bare-keys`: a run's request and answer and a tool's arguments and result are kept under the
  bare keys `input` / `output` instead of the namespaced key their reader reads.

Forked vocabularies (`FORKS`, read with `--drift NAME` alone: a measure, not a guard) keep the
shape of a known instrumentation under a namespace no reader knows, as a fork or a look-alike of it
writes: on the spans that play a role and the other spans of their readers, every key of the reader's own namespace (the first part of
each key it marks its spans by, `conventions.reader_namespaces`, and the unprefixed keys of its
family, `UNPREFIXED`) is moved under `acme` with the rest of the key and its value kept
(`openinference.span.kind` -> `acme.span.kind`, `traceloop.entity.input` -> `acme.entity.input`,
`input.value` -> `acme.input.value`).

- `forked-keys`: the reader's namespace; the GenAI conventions' `gen_ai.*` keys are kept.
- `forked-genai`: the same, and `gen_ai.*` keys under a vendor's prefix too (`acme.gen_ai.*`).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from otel_scorers.conventions import Convention, SpanRole, detect
from otel_scorers.conventions.namespaces import reader_namespaces
from otel_scorers.runs.otlp_files import InputProblem, read_spans
from otel_scorers.runs.span_roles import SpanRoles, span_roles
from otel_scorers.span_record import SpanRecord

#: A key whose name says it holds a kind (the inferred vocabularies' notion), or the GenAI
#: conventions' operation.
_KIND_KEY = re.compile(r"(?i)(?:(?:^|[._:])(?:span_?)?(?:sub_?)?(?:kind|type)|gen_ai\.operation\.name)$")
#: Kind values (lower case) that name a run, a tool call or a model call.
_KIND_VALUES = frozenset(
    {
        "agent",
        "agent_run",
        "invoke_agent",
        "flow",
        "workflow",
        "chat_client",
        "tool",
        "tool_call",
        "execute_tool",
        "llm",
        "model",
        "generation",
        "chat",
        "chat_model",
        "model_generation",
        "generate_content",
    }
)
VERSION_SUFFIX = ".v2"


@dataclass
class Span:
    """One OTLP/JSON span as a drift sees it: its attributes (OTLP key-values, changed in place),
    the record the run builder read, the reader that claimed it and the role it gave (None on a
    span of that reader that plays none, which only a fork rewrites)."""

    attributes: list[dict[str, Any]]
    record: SpanRecord
    convention: Convention
    role: SpanRole | None

    def strings(self) -> Iterator[tuple[dict[str, Any], str]]:
        for item in self.attributes:
            text = item.get("value", {}).get("stringValue")
            if isinstance(text, str):
                yield item, text

    def holding(self, fact: Any) -> dict[str, Any] | None:
        """The attribute whose value is `fact` (as text, or as the JSON it decodes to)."""
        if fact is None or fact == "" or fact == {} or fact == []:
            return None
        wanted = _decoded(fact) if isinstance(fact, str) else fact
        for item, text in self.strings():
            if _KIND_KEY.search(item["key"]) or item["key"].endswith("name"):
                continue
            if text == fact or _decoded(text) == wanted:
                return item
        return None

    def has(self, key: str) -> bool:
        return any(item["key"] == key for item in self.attributes)


def _decoded(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _set(item: dict[str, Any], value: Any) -> None:
    item["value"] = {"stringValue": value if isinstance(value, str) else json.dumps(value)}


def kind_version(span: Span, index: int) -> int:
    changed = 0
    for item, text in list(span.strings()):
        bare = text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text
        if _KIND_KEY.search(item["key"]) and bare.lower() in _KIND_VALUES:
            _set(item, text.replace(bare, bare + VERSION_SUFFIX, 1))
            changed += 1
    return changed


def wrapped_result(span: Span, index: int) -> int:
    if span.role != "tool":
        return 0
    item = span.holding(span.convention.tool_call(span.record).result)
    if item is None:
        return 0
    _set(item, {"result" if index % 2 == 0 else "output": _decoded(item["value"]["stringValue"])})
    return 1


def _moved(span: Span, item: dict[str, Any] | None, key: str) -> int:
    if item is None or item["key"] == key or span.has(key):
        return 0
    item["key"] = key
    return 1


def generic_io(span: Span, index: int) -> int:
    if span.role != "tool":
        return 0
    call = span.convention.tool_call(span.record)
    arguments, result = span.holding(call.arguments), span.holding(call.result)
    return _moved(span, arguments, "input.value") + _moved(span, result, "output.value")


def recorded_call(span: Span, index: int) -> int:
    if span.role == "run":
        request = span.convention.run_content(span.record).input_text
        item = span.holding(request)
        if item is None or not isinstance(request, str) or item["value"]["stringValue"] != request:
            return 0
        _set(item, {"args": [_decoded(request)], "kwargs": {}})
        return 1
    if span.role == "tool":
        arguments = span.convention.tool_call(span.record).arguments
        item = span.holding(arguments)
        recorded = _decoded(item["value"]["stringValue"]) if item is not None else None
        if item is None or not isinstance(recorded, dict) or {"args", "kwargs"} & recorded.keys():
            return 0
        _set(item, {"args": [], "kwargs": _decoded(item["value"]["stringValue"])})
        return 1
    return 0


def bare_keys(span: Span, index: int) -> int:
    if span.role == "run":
        content = span.convention.run_content(span.record)
        request, answer = content.input_text, content.output_text
    elif span.role == "tool":
        call = span.convention.tool_call(span.record)
        request, answer = call.arguments, call.result
    else:
        return 0
    return _moved(span, span.holding(request), "input") + _moved(span, span.holding(answer), "output")


#: The word a forked vocabulary's keys are kept under: no reader's namespace.
FORK = "acme"
#: The unprefixed keys' first parts of a reader's family, by reader: OpenInference's generic and
#: indexed keys (`input.value`, `llm.input_messages.0.message.content`, `tool.name`), OpenLLMetry's
#: `llm.*`.
UNPREFIXED: dict[str, frozenset[str]] = {
    "openinference": frozenset(
        {"input", "output", "llm", "tool", "tool_call", "session", "user", "metadata", "agent", "graph"}
    ),
    "openllmetry": frozenset({"llm"}),
}
_GEN_AI = "gen_ai"
_SEPARATOR = re.compile(r"(?=[.:])")


def _forked(span: Span, genai: bool) -> int:
    namespaces = reader_namespaces(span.convention) - {_GEN_AI}
    unprefixed = UNPREFIXED.get(span.convention.name, frozenset())
    changed = 0
    for item in span.attributes:
        key = item["key"]
        first, *split = _SEPARATOR.split(key, maxsplit=1)
        if first in namespaces and split:
            forked = FORK + "".join(split)
        elif first in unprefixed or (genai and first == _GEN_AI):
            forked = f"{FORK}.{key}"
        else:
            continue
        changed += _moved(span, item, forked)
    return changed


def forked_keys(span: Span, index: int) -> int:
    return _forked(span, genai=False)


def forked_genai(span: Span, index: int) -> int:
    return _forked(span, genai=True)


DRIFTS: dict[str, Callable[[Span, int], int]] = {
    "kind-version": kind_version,
    "wrapped-result": wrapped_result,
    "generic-io": generic_io,
    "recorded-call": recorded_call,
    "bare-keys": bare_keys,
}
FORKS: dict[str, Callable[[Span, int], int]] = {"forked-keys": forked_keys, "forked-genai": forked_genai}


def _span_id(text: str) -> int:
    if re.fullmatch(r"[0-9a-fA-F]+", text):
        return int(text, 16)
    try:
        return int.from_bytes(base64.b64decode(text), "big")
    except binascii.Error:
        return -1


def _spans_drifted(found: SpanRoles, fork: bool) -> Iterator[tuple[int, tuple[Convention, SpanRole | None]]]:
    """The spans a drift rewrites, with their reader and role: those that play a role; for a
    fork, every span of a reader that gives one a role (a fork writes its keys on all its spans)."""
    yield from found.roles.items()
    if not fork:
        return
    readers = {convention.name for convention, _ in found.roles.values()}
    for span_id, record in found.by_id.items():
        convention = detect(record) if span_id not in found.roles else None
        if convention is not None and convention.name in readers:
            yield span_id, (convention, None)


def drifted(trace_path: Path, drift: str, directory: Path) -> tuple[Path, int]:
    """A copy of the trace in `directory` with `drift` applied, and how many facts it moved."""
    apply = DRIFTS.get(drift) or FORKS[drift]
    document = json.loads(trace_path.read_text())
    spans: dict[tuple[int, int], dict[str, Any]] = {}
    for resource_spans in document["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans.get("spans", []):
                spans[(_span_id(span["traceId"]), _span_id(span["spanId"]))] = span
    traces: dict[int, list[SpanRecord]] = {}
    problems: list[InputProblem] = []
    for record in read_spans(trace_path, problems):
        traces.setdefault(record.trace_id, []).append(record)
    changed = 0
    index = 0
    for trace_id, records in traces.items():
        found = span_roles(records)
        for span_id, (convention, role) in _spans_drifted(found, drift in FORKS):
            written = spans.get((trace_id, span_id))
            if written is None:
                continue
            record = found.by_id[span_id]
            changed += apply(Span(written.setdefault("attributes", []), record, convention, role), index)
            index += 1
    path = directory / trace_path.name
    path.write_text(json.dumps(document))
    return path, changed
