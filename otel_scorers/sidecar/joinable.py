"""Whether a trace without a run span is worth handing to the join of model calls
(`runs.call_chains`): only when one of its spans is of a kind an instrumentation convention reads.

A Collector that sends all of an application's traces sends mostly HTTP and database work, which
no convention reads: converting those traces and finding their roles, in the scoring process
that joins, would cost for nothing. A span's kind is what `conventions.detect` decides a
convention by (its scope, its name, its attribute keys and the few values conventions compare),
read here from the protobuf span without converting it; the verdict of each kind is remembered,
found the first time by converting one span of it and asking `detect`. A span of more keys than
a kind holds is converted and asked each time.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from otel_scorers import conventions
from otel_scorers.otlp.span_bytes import key_of, key_value, text_value
from otel_scorers.otlp.span_bytes_schema import BytesSpan
from otel_scorers.sidecar.otlp_spans import OtlpSpan

#: Kinds of span whose verdict is remembered (kinds are few in a steady stream: span names
#: repeat); past this many, each span of a new kind is converted and asked.
MAX_REMEMBERED_KINDS = 4096

_verdicts: dict[tuple[Any, ...], bool] = {}
#: The conventions the verdicts were found with, and the keys whose values they compare
#: (`Convention.detection_values`): new descriptions (`use_descriptions`) forget the verdicts.
_found_with: tuple[conventions.Convention, ...] = ()
_compared_keys: frozenset[str] = frozenset()


def holds_convention_span(spans: Iterable[OtlpSpan]) -> bool:
    """Whether a convention reads one of `spans`: a model call, a tool, an agent's span."""
    global _found_with, _compared_keys
    if _found_with is not conventions.CONVENTIONS:
        _verdicts.clear()
        _found_with = conventions.CONVENTIONS
        _compared_keys = frozenset(conventions.detection_values())
    values = _compared_keys
    for item in spans:
        span = item.span
        # Sliced: walking a repeated protobuf field to its end raises an IndexError upb formats.
        pairs = span.attributes[:]
        as_bytes = type(span) is BytesSpan  # key-values kept as bytes (`span_bytes_schema`)
        keys = [key_of(kv) for kv in pairs] if as_bytes else [kv.key for kv in pairs]
        if len(keys) > conventions.MAX_KIND_KEYS:  # as `conventions.detect` remembers kinds
            if conventions.detect(item.record()) is not None:
                return True
            continue
        if as_bytes:
            compared = tuple(
                text_value(key_value(pairs[index])[1]) for index, key in enumerate(keys) if key in values
            )
        else:
            compared = tuple(
                pairs[index].value.string_value for index, key in enumerate(keys) if key in values
            )
        kind = (item.origin.scope.name, span.name, compared, *keys)
        verdict = _verdicts.get(kind)
        if verdict is None:
            verdict = conventions.detect(item.record()) is not None
            if len(_verdicts) < MAX_REMEMBERED_KINDS:
                _verdicts[kind] = verdict
        if verdict:
            return True
    return False
