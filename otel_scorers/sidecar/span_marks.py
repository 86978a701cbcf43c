"""What a received span says about its trace, read from the protobuf span without converting it:
whether it may be an agent run by a reader's markers (`conventions.may_start_run`), else whether
it carries what a vocabulary of the framework's own is inferred from (`conventions/inferred.py`):
a key whose name says kind, outside the readers' namespaces, whose value names a run (`agent`,
`workflow`, ...) or a tool or a model call.

One walk of the span's attributes, each key looked up once in a table of what it is to the
readers in use: a marker's key, a key that may be a kind key, or neither. A key not in the table
is classified then and remembered; past `MAX_REMEMBERED_KEYS` (keys that number messages make
many), the table is forgotten and filled again. New descriptions (`use_descriptions`) forget it.
A value is read only for a marker's key or a kind key.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.trace.v1.trace_pb2 import Span

from otel_scorers import conventions
from otel_scorers.conventions import RUN_MARKER_KEYS, may_be_kind_key, may_start_run
from otel_scorers.conventions.inferred import ANY_RUN_KIND, KINDS, normalised

#: The span says nothing of a run.
NO_MARK = 0
#: A kind key names a tool or a model call: a vocabulary may be inferred from the trace, whose
#: runs, if any, no span marks as it arrives (they are the ones the rules every reader shares find).
NAMES_A_CALL = 1
#: A kind key names a run: the span may open a run of an inferred vocabulary.
NAMES_A_RUN = 2
#: The span may be an agent run by a reader's markers (`may_start_run`).
RUN = 3

#: Keys classified, past which the table is forgotten.
MAX_REMEMBERED_KEYS = 8192

_PLAIN, _MARKER, _KIND = 0, 1, 2
#: A key not yet classified (a true value, so that plain keys cost one lookup and one test).
_UNSEEN = -1
_table: dict[str, int] = {}
_found_with: tuple[Any, ...] = ()


def refresh() -> None:
    """Forget the table when the readers in use changed: once per request sorted out."""
    global _found_with
    if _found_with is not conventions.CONVENTIONS:
        _table.clear()
        _found_with = conventions.CONVENTIONS


def _classified(key: str) -> int:
    found = _MARKER if key in RUN_MARKER_KEYS else _KIND if may_be_kind_key(key) else _PLAIN
    if len(_table) >= MAX_REMEMBERED_KEYS:
        _table.clear()
    _table[key] = found
    return found


def span_mark(span: Span) -> int:
    """What the span says of a run (`RUN`, `NAMES_A_RUN`, `NAMES_A_CALL`, `NO_MARK`), for the
    readers in use as of the last `refresh`. The name (remembered per name) is asked first; the
    attributes are walked as a slice (walking a repeated protobuf field to its end raises an
    IndexError upb formats)."""
    name = span.name
    if may_start_run(name, None):
        return RUN
    table = _table
    markers: dict[str, str] | None = None
    mark = NO_MARK
    for kv in span.attributes[:]:
        key = kv.key
        found = table.get(key, _UNSEEN)
        if found:
            if found == _UNSEEN:
                found = _classified(key)
            if found == _MARKER:
                if markers is None:
                    markers = {}
                markers[key] = kv.value.string_value
            elif found == _KIND:
                kind = normalised(kv.value.string_value)
                if kind in ANY_RUN_KIND:
                    mark = NAMES_A_RUN
                elif kind in KINDS and not mark:
                    mark = NAMES_A_CALL
    # None (a run's step) is no: a received span has every attribute its run will have.
    if markers is not None and may_start_run(name, markers) is True:
        return RUN
    return mark


def is_run_span(span: Span) -> bool:
    """Whether the span may be an agent run (`may_start_run`), by the readers in use."""
    refresh()
    return span_mark(span) == RUN
