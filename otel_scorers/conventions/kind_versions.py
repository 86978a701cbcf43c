"""Kind values with a version: one reading of a span's kind for every reader.

A framework's next release may give a kind of span a versioned value of the same kind key
(Genkit Go's `tool.v2` for `tool`; `TOOL.v2`, `execute_tool.v2`, `"AGENT.v2"` JSON-quoted): the
same kind of work, recorded by a newer revision of its action. Readers compare kind values as
they know them, so a span to which its reader gives no role is read again with each versioned
kind value as its kind (`versionless`); run building asks it only of spans without a role, so a
trace whose kinds carry no version pays nothing beyond a glance at those spans' values. Live, a
span starting (in process) or received (by the sidecar) opens a run as its versionless kind
would (`versionless_kind`, asked by `may_start_run` of a marker's value that marks no run, and
by the sidecar's screen of a kind key's value), for one dict lookup of a value seen before.

A kind key is one whose name says it holds a kind (`*.kind`, `*.type`, `*.spanType`,
`*:subtype`), or the GenAI conventions' `gen_ai.operation.name`; a version suffix is `.v2`,
`_v2`, `-v2` or `/v2` (any number, any case) after a word.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from otel_scorers.gen_ai_names import GEN_AI_OPERATION_NAME
from otel_scorers.span_record import SpanRecord

#: A key whose last part says it is a kind: `kind`, `type`, `span_type`, `spanType`, `subtype`...
#: (the inference finds kind keys by it too).
KIND_KEY = re.compile(r"(?i)(?:^|[._:])(?:span_?)?(?:sub_?)?(?:kind|type)$")
#: A key of an indexed list (`llm.input_messages.0.message.contents.0.message_content.type`): an
#: item's type, not the span's kind.
_INDEXED = re.compile(r"[.:_][0-9]+[.:_]")
#: A kind value with a version suffix: the word, then the version.
_VERSIONED = re.compile(r"(?i)^([a-z][a-z0-9_ ]{0,40}?)[._/-]v[0-9]+$")
#: Longer values name no kind.
_MAX_KIND = 64


def versionless_value(value: Any) -> Any:
    """The kind value without its version suffix (JSON quotes kept), or None when it has none."""
    if not isinstance(value, str) or len(value) > _MAX_KIND or not value:
        return None
    quoted = len(value) >= 2 and value[0] == value[-1] == '"'
    text = value[1:-1] if quoted else value
    if not text or not text[-1].isdigit():  # the cheap check, for the many values without one
        return None
    found = _VERSIONED.match(text)
    if found is None:
        return None
    return f'"{found.group(1)}"' if quoted else found.group(1)


#: Kind values seen by `versionless_kind`, each with its value without a version ("" for none):
#: the values of a marker's key are few (a run's, a tool's, a model call's), so a span starting
#: costs one dict lookup; past `_MAX_REMEMBERED_VALUES` values, each is read anew.
_versionless_kinds: dict[str, str] = {}
_MAX_REMEMBERED_VALUES = 4096


def versionless_kind(value: Any) -> str | None:
    """`versionless_value` of a text value, remembered per value: the live screens' reading of a
    versioned kind (`may_start_run` for a marker's value, the sidecar's for a kind key's), one
    dict lookup for a value seen before; None for a value without a version, or not a text."""
    if type(value) is not str:
        return None
    bare = _versionless_kinds.get(value)
    if bare is None:
        bare = versionless_value(value) or ""
        if len(_versionless_kinds) < _MAX_REMEMBERED_VALUES:
            _versionless_kinds[value] = bare
    return bare or None


def versionless(span: SpanRecord) -> SpanRecord | None:
    """The span with each versioned kind value as its kind, or None when it has none."""
    changed: dict[str, Any] | None = None
    attributes = span.attributes
    for key in _kind_keys(attributes):
        bare = versionless_value(attributes[key])
        if bare is None:
            continue
        if changed is None:
            changed = dict(attributes)
        changed[key] = bare
    return replace(span, attributes=changed) if changed is not None else None


#: Attribute keys classified, and those of them that are kind keys: replaced, never changed in
#: place, so that threads building runs at once each read a whole set; past
#: `_MAX_REMEMBERED_KEYS` keys those classified are forgotten.
_seen: frozenset[str] = frozenset()
_kinds: frozenset[str] = frozenset({GEN_AI_OPERATION_NAME})
_MAX_REMEMBERED_KEYS = 8192


def _kind_keys(attributes: Mapping[str, Any]) -> list[str]:
    """The kind keys the span carries: each key's name is looked at once, and a span whose keys
    were all seen costs a subset check and a lookup per kind key known."""
    global _seen, _kinds
    keys = attributes.keys()
    if not _seen.issuperset(keys):
        seen, kinds = (_seen, _kinds) if len(_seen) < _MAX_REMEMBERED_KEYS else (frozenset(), frozenset())
        new = keys - seen
        found = {key for key in new if KIND_KEY.search(key) and not _INDEXED.search(key)}
        _kinds = kinds | found | {GEN_AI_OPERATION_NAME}
        _seen = seen | new
    # The span's few keys looked up among the kind keys, not every kind key met so far among them.
    return [key for key in keys if key in _kinds]
