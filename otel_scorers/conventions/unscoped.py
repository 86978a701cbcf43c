"""Every description read under an instrumentation scope no reader knows, by the keys that mark its
spans: a tracer's spans re-exported, forwarded or bridged under another scope (a collector's, a
fork's, the application's) read as they are under the tracer's own.

A description that names its scope is found by it; one that gives no scope-free entry of its own
(`scope: null` with `marker_attributes`) gets one made from it, its twin: the same reading, found
by its `marker_attributes` or, without them, by the keys its roles name a kind by (the attributes
its `when`s list values of), on spans of a scope no description names. Readers found by markers
they share (two frameworks' descriptions of one tracer) are rivals: a span carrying those markers
is read by the rival whose role condition it meets most closely (the most conditions of its
attributes and name), the first of them in detection order when they are as close, or none gives
it a role.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from otel_scorers.conventions.base import Convention
from otel_scorers.conventions.described import DescribedConvention
from otel_scorers.conventions.inferred import VocabularyInference
from otel_scorers.conventions.namespaces import namespaces
from otel_scorers.span_record import SpanRecord


class UnscopedTwin(DescribedConvention):
    """A scoped description's reading, found by its markers under scopes no description names."""

    def __init__(self, scoped: DescribedConvention, markers: tuple[str, ...]) -> None:
        description = scoped.description.model_copy(
            update={"scope": None, "marker_attributes": list(markers), "marker_name_suffix": None}
        )
        super().__init__(description)
        #: `detect` reads the span's scope as well: no markers alone say it.
        self.markers = None
        self.known_scopes: frozenset[str] = frozenset()
        #: The scope-free readers it shares marker keys with, itself among them (None: none).
        self.rivals: Rivals | None = None

    def detect(self, span: SpanRecord) -> bool:
        if span.scope in self.known_scopes or not super().detect(span):
            return False
        return self.rivals is None or self.rivals.claims(self, span)


def kind_keys(convention: DescribedConvention) -> tuple[str, ...]:
    """The attribute keys its roles name a kind by (a `when` lists their values)."""
    keys = (key for when in convention.role_whens() for key, values in when.attributes if values is not None)
    return tuple(dict.fromkeys(keys))


def twins(conventions: Sequence[Convention]) -> tuple[UnscopedTwin, ...]:
    """A twin for each description that names its scope and has no scope-free entry of its name,
    its markers or kind keys saying which spans are its."""
    described = [c for c in conventions if isinstance(c, DescribedConvention)]
    scopes = frozenset(scope for c in described for scope in c.scopes)
    unscoped = {c.name for c in described if not c.scopes}
    made: list[UnscopedTwin] = []
    for convention in described:
        if not convention.scopes or convention.name in unscoped:
            continue
        markers = convention.marker_keys or kind_keys(convention)
        if markers:
            twin = UnscopedTwin(convention, markers)
            twin.known_scopes = scopes
            made.append(twin)
            unscoped.add(convention.name)
    return tuple(made)


class Rivals:
    """Scope-free readers that share marker keys: which of them reads a span carrying them."""

    def __init__(self, members: Sequence[DescribedConvention]) -> None:
        self.members = tuple(members)
        # Each member's role conditions on the span's attributes and name alone (what its values
        # hold not asked).
        self._kinds = tuple(tuple(replace(when, holds=()) for when in c.role_whens()) for c in self.members)

    def claims(self, member: DescribedConvention, span: SpanRecord) -> bool:
        chosen: DescribedConvention | None = None
        best = -2
        for other, whens in zip(self.members, self._kinds, strict=True):
            if other is not member and not _carries(other, span):
                continue
            closeness = max((when.specificity for when in whens if when.matches(span)), default=-1)
            if closeness > best:
                chosen, best = other, closeness
        return chosen is member


def _carries(convention: DescribedConvention, span: SpanRecord) -> bool:
    if isinstance(convention, UnscopedTwin) and span.scope in convention.known_scopes:
        return False
    return not span.attributes.keys().isdisjoint(convention.marker_keys)


def with_twins(conventions: tuple[Convention, ...]) -> tuple[Convention, ...]:
    """`conventions` with the twins of their scoped descriptions (`twins`). A twin that shares
    marker keys with scope-free readers is asked right before the first of them, and reads a span
    only where its roles fit the span more closely than theirs (`Rivals`); the others are asked
    after every reader (a key a tracer shares with the GenAI conventions, as its kind key under
    another instrumentation's scope, stays theirs)."""
    made = twins(conventions)
    given = [c for c in conventions if isinstance(c, DescribedConvention) and not c.scopes]
    placed = list(conventions)
    last: list[Convention] = []
    for twin in made:
        keys = set(twin.marker_keys)
        shared = [c for c in (*given, *made) if c is not twin and keys.intersection(c.marker_keys)]
        if not shared:
            last.append(twin)
            continue
        twin.rivals = Rivals([c for c in (*given, *made) if c in shared or c is twin])
        twin.detection_values = kind_keys(twin)
        first = [at for at, c in enumerate(placed) if c in shared]
        placed.insert(min(first) if first else len(placed), twin)
    return (*placed, *last)


def described_of(conventions: Sequence[Convention]) -> tuple[DescribedConvention, ...]:
    """The described readers among `conventions`, twins (made, not given) left out."""
    return tuple(
        c for c in conventions if isinstance(c, DescribedConvention) and not isinstance(c, UnscopedTwin)
    )


def found_by_markers(conventions: Sequence[Convention]) -> tuple[DescribedConvention, ...]:
    """The descriptions' own scope-free entries, found by their marker attributes alone."""
    return tuple(c for c in described_of(conventions) if not c.scopes)


_WITHOUT: dict[tuple[tuple[Convention, ...], frozenset[str]], VocabularyInference] = {}


def inference_without(conventions: tuple[Convention, ...], names: frozenset[str]) -> VocabularyInference:
    """The inference of vocabularies for `conventions` but those named `names` (their twins too):
    their namespaces taken as unknown. Remembered for the readers in use."""
    key = (conventions, names)
    found = _WITHOUT.get(key)
    if found is None:
        if len(_WITHOUT) > _MAX_WITHOUT:
            _WITHOUT.clear()
        kept = tuple(c for c in conventions if c.name not in names)
        found = _WITHOUT[key] = VocabularyInference(namespaces(kept))
    return found


_MAX_WITHOUT = 64
