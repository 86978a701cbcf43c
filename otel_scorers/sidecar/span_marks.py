"""What a received span says about its trace, read from the protobuf span without converting it:
whether it may be an agent run by a reader's markers (`conventions.may_start_run`), else whether
it carries what a vocabulary of the framework's own is inferred from (`conventions/inferred.py`):
a key whose name says kind, outside the readers' namespaces, whose value names a run (`agent`,
`workflow`, ...) or a tool or a model call. A kind value with a version (`agent.v2`,
`conventions/kind_versions.py`) says what the value without it says, as when runs are built.

One walk of the span's attributes, each key looked up in what it is to the readers in use: a
marker's key, a key that may be a kind key, or neither (the many, one set lookup each, as the
markers' keys alone cost). A key not seen before is classified then and remembered; past
`MAX_REMEMBERED_KEYS` (keys that number messages make many), those remembered are forgotten and
learned again. New descriptions (`use_descriptions`) forget them. A value is read only for a
marker's key or a kind key.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.trace.v1.trace_pb2 import Span

from otel_scorers import conventions
from otel_scorers.conventions import RUN_MARKER_KEYS, may_be_kind_key, may_start_run
from otel_scorers.conventions.inferred_kinds import ANY_RUN_KIND, KINDS, normalised
from otel_scorers.conventions.kind_versions import versionless_kind
from otel_scorers.otlp.span_bytes import key_value, text_value
from otel_scorers.otlp.span_bytes_schema import BytesSpan

#: The span says nothing of a run.
NO_MARK = 0
#: A kind key names a tool or a model call: a vocabulary may be inferred from the trace, whose
#: runs, if any, no span marks as it arrives (they are the ones the rules every reader shares find).
NAMES_A_CALL = 1
#: A kind key names a run: the span may open a run of an inferred vocabulary.
NAMES_A_RUN = 2
#: The span may be an agent run by a reader's markers (`may_start_run`).
RUN = 3

#: Keys classified, past which those remembered are forgotten.
MAX_REMEMBERED_KEYS = 8192

#: Keys that are neither a marker's nor a possible kind key: the many, each costing one set
#: lookup, as the markers' keys alone did.
_plain: set[str] = set()
#: Keys that may be a kind key (`conventions.may_be_kind_key`).
_kind_keys: set[str] = set()
#: The keys of `_plain` as a key-value written by every SDK begins: the key's tag (`0x0a`), its
#: length in one byte (under 128) and its bytes; for spans read with `span_bytes_schema`, whose
#: key-values of a plain key are stepped over by those bytes alone.
_plain_bytes: set[bytes] = set()
#: The marks of spans read with `span_bytes_schema`, by their name and key-values of keys not
#: plain, those short enough to repeat (markers, kind keys); as many as keys remembered at most.
_marks: dict[tuple[Any, ...], int] = {}
_MAX_REMEMBERED_MARK_BYTES = 512
_found_with: tuple[Any, ...] = ()


def refresh() -> None:
    """Forget what keys are when the readers in use changed: once per request sorted out."""
    global _found_with
    if _found_with is not conventions.CONVENTIONS:
        _forget()
        _found_with = conventions.CONVENTIONS


def remembered_keys() -> int:
    """How many keys are remembered as classified."""
    return len(_plain) + len(_kind_keys)


def _forget() -> None:
    _marks.clear()
    _plain.clear()
    _kind_keys.clear()
    _plain_bytes.clear()


def _is_kind_key(key: str) -> bool:
    """Whether `key`, not a marker's, may be a kind key; remembered (the sets are changed in
    place: `span_mark` holds them)."""
    if len(_plain) + len(_kind_keys) >= MAX_REMEMBERED_KEYS:
        _forget()
    if may_be_kind_key(key):
        _kind_keys.add(key)
        return True
    _plain.add(key)
    encoded = key.encode()
    if len(encoded) < 0x80:
        _plain_bytes.add(b"\n" + bytes((len(encoded),)) + encoded)
    return False


def span_mark(span: Span) -> int:
    """What the span says of a run (`RUN`, `NAMES_A_RUN`, `NAMES_A_CALL`, `NO_MARK`), for the
    readers in use as of the last `refresh`. The name (remembered per name) is asked first; the
    attributes are walked as a slice (walking a repeated protobuf field to its end raises an
    IndexError upb formats)."""
    name = span.name
    if may_start_run(name, None):
        return RUN
    if type(span) is BytesSpan:
        return _bytes_mark(name, span.attributes[:])
    plain = _plain
    markers: dict[str, str] | None = None
    mark = NO_MARK
    for kv in span.attributes[:]:
        key = kv.key
        if key in plain:
            continue
        if key in RUN_MARKER_KEYS:
            if markers is None:
                markers = {}
            markers[key] = kv.value.string_value
        elif key in _kind_keys or _is_kind_key(key):
            mark = _kind_mark(kv.value.string_value, mark)
    # None (a run's step) is no: a received span has every attribute its run will have.
    if markers is not None and may_start_run(name, markers) is True:
        return RUN
    return mark


def _bytes_mark(name: str, serialized: list[bytes]) -> int:
    """`span_mark` of a span read with `span_bytes_schema`, from its key-values' bytes. A plain
    key's key-value is stepped over by the bytes its key is written with (`_plain_bytes`: its
    tag, its length and itself, as the key-value begins), sliced from its start by the length
    they say; the others' key and value are read as a scoring process reads them
    (`span_bytes.key_value`, remembered when short)."""
    plain = _plain_bytes
    try:
        others = [kv for kv in serialized if kv[: 2 + kv[1]] not in plain]
    except IndexError:  # an empty key-value (no key, no value)
        others = [kv for kv in serialized if not kv or kv[: 2 + kv[1]] not in plain]
    if not others:
        return NO_MARK
    # Spans of a kind repeat their name, markers and kind keys: what they say is remembered.
    kind = (name, *others)
    mark = _marks.get(kind)
    if mark is None:
        mark = _read_mark(name, others)
        if sum(map(len, others)) <= _MAX_REMEMBERED_MARK_BYTES:
            if len(_marks) >= MAX_REMEMBERED_KEYS:
                _marks.clear()
            _marks[kind] = mark
    return mark


def _read_mark(name: str, others: list[bytes]) -> int:
    """What a span says of a run by its name and its key-values of keys not plain."""
    markers: dict[str, str] | None = None
    mark = NO_MARK
    for kv in others:
        key, value = key_value(kv)
        if key in _plain:
            continue
        if key in RUN_MARKER_KEYS:
            if markers is None:
                markers = {}
            markers[key] = value if type(value) is str else ""
        elif key in _kind_keys or _is_kind_key(key):
            mark = _kind_mark(text_value(value), mark)
    if markers is not None and may_start_run(name, markers) is True:
        return RUN
    return mark


def _kind_mark(value: str, mark: int) -> int:
    """The mark a kind key's value makes, given the span's mark so far."""
    kind = normalised(versionless_kind(value) or value)  # `AGENT.v2` as `AGENT`
    if kind in ANY_RUN_KIND:
        return NAMES_A_RUN
    if kind in KINDS and not mark:
        return NAMES_A_CALL
    return mark


def is_run_span(span: Span) -> bool:
    """Whether the span may be an agent run (`may_start_run`), by the readers in use."""
    refresh()
    return span_mark(span) == RUN
