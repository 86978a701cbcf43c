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
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
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


def versionless(span: SpanRecord, known: KindKeys | None = None) -> SpanRecord | None:
    """The span with each versioned kind value as its kind, or None when it has none; `known`:
    the span's kind keys when already found (`conventions.detect_with_kind_keys`)."""
    attributes = span.attributes
    # `kind_keys` and `versionless_kind`, inline: this runs for every span its reader gives no role.
    if known is None:
        keys = tuple(attributes)
        found = _kind_keys.get(keys)
        known = found if found is not None else _remembered_kind_keys(keys)
    own = known.own
    if not own:
        return None
    changed: dict[str, Any] | None = None
    for key in own:
        value = attributes[key]
        try:
            bare: str | None = _versionless_kinds[value]
        except (KeyError, TypeError):  # a value not seen, or not a text
            bare = versionless_kind(value)
        if not bare:
            continue
        if changed is None:
            changed = dict(attributes)
        changed[key] = bare
    return replace(span, attributes=changed) if changed is not None else None


@dataclass(frozen=True, slots=True)
class KindKeys:
    """A span's keys that may hold a kind, in the span's order."""

    #: Those whose name says they hold a kind (`KIND_KEY`): where an inferred vocabulary's kind
    #: key is looked for.
    named: tuple[str, ...]
    #: Those holding the span's own kind, whose versioned values are read as the kind (`versionless`):
    #: the named ones but an indexed list's items' (`_INDEXED`), and `gen_ai.operation.name`. For
    #: a kind of span remembered (`of_kind`), only those whose value each span of it has to have
    #: read: a value the kind holds (a compared one) is read once, for all of its spans.
    own: tuple[str, ...]
    #: For a kind of span remembered (`of_kind`): a processor relabelled its spans
    #: (`conventions.relabelled`), which are to be read as their instrumentation wrote them.
    relabelled: bool = False


def of_kind(
    keys: KindKeys, attributes: Mapping[str, Any], compared: Collection[str], relabelled: bool
) -> KindKeys:
    """The kind keys of a kind of span about to be remembered, from one span of it: `compared`,
    the keys whose values its kind holds (`conventions.detection_values`); `relabelled`, as
    decided by the span's scope, name and keys, which its kind holds too. A compared value is
    the same on every span of the kind, so whether it carries a version is decided here, once:
    `own` keeps the other keys (read on each span) and a compared one only when versioned. A
    kind with no `own` key left and not relabelled is read as detected: most are."""
    own = tuple(
        key for key in keys.own if key not in compared or versionless_value(attributes[key]) is not None
    )
    return keys if own == keys.own and not relabelled else KindKeys(keys.named, own, relabelled)


_NO_KIND_KEYS = KindKeys((), ())
#: What each attribute key's name says (`_NAMED`, `_OWN`), and the kind keys of each set of a
#: span's keys (its keys in order): spans of a kind carry the same keys, so a span costs a tuple
#: of its keys and one lookup. Past `_MAX_REMEMBERED_KEYS` keys and `_MAX_REMEMBERED_SPAN_KEYS`
#: sets of them (keys that number messages, say), each is read anew.
_NAMED, _OWN = 1, 2
_key_kinds: dict[str, int] = {GEN_AI_OPERATION_NAME: _OWN}
_kind_keys: dict[tuple[str, ...], KindKeys] = {}
_MAX_REMEMBERED_KEYS = 8192
_MAX_REMEMBERED_SPAN_KEYS = 4096


def kind_keys(attributes: Mapping[str, Any]) -> KindKeys:
    """The span's keys that may hold a kind (`KindKeys`), read once per set of keys."""
    keys = tuple(attributes)
    found = _kind_keys.get(keys)
    return found if found is not None else _remembered_kind_keys(keys)


def _remembered_kind_keys(keys: tuple[str, ...]) -> KindKeys:
    found = _read_kind_keys(keys)
    if len(_kind_keys) < _MAX_REMEMBERED_SPAN_KEYS:
        _kind_keys[keys] = found
    return found


def _read_kind_keys(keys: tuple[str, ...]) -> KindKeys:
    named: list[str] = []
    own: list[str] = []
    for key in keys:
        says = _key_kinds.get(key)
        if says is None:
            says = (_NAMED | (0 if _INDEXED.search(key) else _OWN)) if KIND_KEY.search(key) else 0
            if len(_key_kinds) < _MAX_REMEMBERED_KEYS:
                _key_kinds[key] = says
        if says & _NAMED:
            named.append(key)
        if says & _OWN:
            own.append(key)
    return KindKeys(tuple(named), tuple(own)) if named or own else _NO_KIND_KEYS
