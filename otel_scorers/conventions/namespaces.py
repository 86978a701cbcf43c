"""The readers' namespaces: the first part (before `.` or `:`) of every key a reader marks its
spans or runs by (`Convention.markers`, `detection_values`, `run_start_markers`). A vocabulary of
those namespaces is theirs, never inferred (`inferred.py`); the same keys under a namespace no
reader knows are a fork's (`forked.py`)."""

from __future__ import annotations

from otel_scorers.conventions.base import Convention
from otel_scorers.conventions.forked import Forks
from otel_scorers.conventions.inferred import GEN_AI_NAMESPACE
from otel_scorers.conventions.inferred_names import SEPARATORS


def marker_keys(convention: Convention) -> set[str]:
    """The keys a reader marks its spans or runs by."""
    keys = {key for key, _ in convention.run_start_markers}
    keys.update(convention.detection_values)
    if convention.markers is not None:
        keys.update(convention.markers.keys)
    return keys


def namespaces(conventions: tuple[Convention, ...]) -> set[str]:
    """The namespaces of these readers' keys."""
    keys = {key for convention in conventions for key in marker_keys(convention)}
    return {SEPARATORS.split(key, maxsplit=1)[0] for key in keys}


def reader_namespaces(convention: Convention) -> frozenset[str]:
    """The namespaces of one reader's keys."""
    return frozenset(namespaces((convention,)))


def reader_forks(conventions: tuple[Convention, ...]) -> Forks:
    """The forks of these readers' vocabularies (`forked.py`)."""
    readers = [(marker_keys(convention), reader_namespaces(convention)) for convention in conventions]
    return Forks(readers, frozenset(namespaces(conventions)) | {GEN_AI_NAMESPACE})
