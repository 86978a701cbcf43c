"""A known reader's vocabulary under a namespace of its own, as a fork or a look-alike writes it.

A fork of an instrumentation keeps its shape under another first part: `acme.span.kind` where
OpenInference writes `openinference.span.kind`, `acme.entity.input` for OpenLLMetry's
`traceloop.entity.input`, `acme.gen_ai.operation.name` for the GenAI conventions' key under a
vendor's prefix. A key whose first part no reader knows is read as a fork's when, that first part
replaced by a reader's namespace (or dropped), it is a key the reader marks its spans by
(`Convention.markers`, `detection_values`, `run_start_markers`), of more than one word after that
first part (`error.type` is no fork of `span.type`): the fork (`Fork`) maps each key
under that first part to the reader's. A span read as the reader's (`Fork.unforked`) keeps its own
keys and gains the mapped ones: every fact stays where it was.

Forks are found from the keys each kind of span carries, once per set of keys (`Forks.of`): a
span of a known reader, whose keys are all under known namespaces, costs a tuple of its keys and
one lookup; so do the keys a span gains as a fork's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from otel_scorers.conventions.inferred import GEN_AI_NAMESPACE
from otel_scorers.span_record import SpanRecord, with_attributes

#: Where a key's first part ends (`.` or `:`), the separator kept with the rest.
_SEPARATOR = re.compile(r"(?=[.:])")
_MAX_REMEMBERED_KEY_SETS = 4096
#: Sets of keys a fork remembers what its spans gain for (`Fork.remembered`): a fork's spans are
#: of its vocabulary's few kinds, and forks are many (one per prefix and reader a span's keys read as).
_MAX_REMEMBERED_BY_FORK = 256


@dataclass(frozen=True, slots=True)
class Fork:
    """Keys under `prefix` (`acme.`) read under `namespace` (`openinference.`, or `""`: dropped);
    each also read without the prefix when its first part is no reader's namespace, the forked
    reader's own or the GenAI conventions' (`bare`: OpenInference's unprefixed `input.value`,
    `gen_ai.*` under a vendor's prefix)."""

    prefix: str
    namespace: str
    own: frozenset[str]
    known: frozenset[str]
    #: The keys a span of a set of keys gains as the fork's (`unforked`), by set of keys, kept on
    #: the fork (`Forks.of` gives the same forks for the same keys): spans of a kind carry the
    #: same keys, so a span read again as a fork costs a tuple of its keys and one lookup.
    #: (the keys gained, the span's keys they are read from) in the same order.
    remembered: dict[tuple[str, ...], tuple[tuple[str, ...], tuple[str, ...]]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def unforked(self, span: SpanRecord) -> SpanRecord:
        """The span with each of its keys under the fork's prefix read as the forked reader's too."""
        attributes = span.attributes
        keys = tuple(attributes)
        remembered = self.remembered
        mapped = remembered.get(keys)
        if mapped is None:
            pairs = self._mapped(keys)
            mapped = (tuple(new for new, _ in pairs), tuple(key for _, key in pairs))
            if len(remembered) < _MAX_REMEMBERED_BY_FORK:
                remembered[keys] = mapped
        gained, read_from = mapped
        if not gained:
            return span
        forked = dict(attributes)  # the gained keys set in C: a fork's span gains many
        forked.update(zip(gained, map(attributes.__getitem__, read_from), strict=True))
        return with_attributes(span, forked)

    def _mapped(self, keys: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
        """(forked reader's key, the span's key) of each key a span of these keys gains, the first
        key mapped to it winning."""
        present = set(keys)
        added: dict[str, str] = {}
        cut = len(self.prefix)
        for key in keys:
            if not key.startswith(self.prefix):
                continue
            tail = key[cut:]
            for mapped in (self.namespace + tail, tail if self.namespace and self.bare(tail) else None):
                if mapped is not None and mapped not in present:
                    added.setdefault(mapped, key)
        return tuple(added.items())

    def target(self) -> frozenset[str]:
        """The namespaces of the forked reader: its namespace, or its own when the prefix is dropped."""
        return frozenset({self.namespace[:-1]}) if self.namespace else self.own

    def bare(self, tail: str) -> bool:
        first = _SEPARATOR.split(tail, maxsplit=1)[0]
        return first in self.own or first == GEN_AI_NAMESPACE or first not in self.known


class Forks:
    """The forks of the readers in use, found from a span's keys."""

    def __init__(
        self, readers: Iterable[tuple[Iterable[str], frozenset[str]]], known: frozenset[str]
    ) -> None:
        """`readers`: each reader's marker keys and namespaces; `known`: every reader's namespace."""
        self._known = known
        #: A marker key's part after its first part (`.span.kind`) -> (its first part and
        #: separator, the reader's namespaces); and a whole marker key -> the reader's namespaces.
        self._tails: dict[str, list[tuple[str, frozenset[str]]]] = {}
        self._whole: dict[str, frozenset[str]] = {}
        for keys, namespaces in readers:
            for key in keys:
                first, *rest = _SEPARATOR.split(key, maxsplit=1)
                self._whole.setdefault(key, namespaces)
                if rest:
                    found = self._tails.setdefault(rest[0], [])
                    if (first + rest[0][0], namespaces) not in found:
                        found.append((first + rest[0][0], namespaces))
        self._by_keys: dict[tuple[str, ...], tuple[Fork, ...]] = {}

    def of_spans(self, spans: Iterable[SpanRecord]) -> dict[Fork, None]:
        """The forks these spans' keys read as, in their order (`of`, in line: asked of the
        spans without a role of every trace in which no reader found a run)."""
        forks: dict[Fork, None] = {}
        by_keys = self._by_keys
        for span in spans:
            attributes = span.attributes
            found = by_keys.get(tuple(attributes))
            if found is None:
                found = self.of(attributes)
            for fork in found:
                forks[fork] = None
        return forks

    def of(self, attributes: Mapping[str, Any]) -> tuple[Fork, ...]:
        """The forks a span's keys read as, remembered per set of keys."""
        keys = tuple(attributes)
        found = self._by_keys.get(keys)
        if found is None:
            found = tuple(dict.fromkeys(fork for key in keys for fork in self._forks_of(key)))
            if len(self._by_keys) < _MAX_REMEMBERED_KEY_SETS:
                self._by_keys[keys] = found
        return found

    def _forks_of(self, key: str) -> Iterable[Fork]:
        first, *rest = _SEPARATOR.split(key, maxsplit=1)
        if not rest or first in self._known:
            return
        prefix = first + rest[0][0]
        tail = rest[0][1:]
        namespaces = self._whole.get(tail)
        if namespaces is not None:
            yield Fork(prefix, "", namespaces, self._known)
        if _SEPARATOR.search(tail) is None:
            return  # one word (`error.type` as `span.type`) says too little of whose key it is
        for namespace, own in self._tails.get(rest[0], ()):
            yield Fork(prefix, namespace, own, self._known)
