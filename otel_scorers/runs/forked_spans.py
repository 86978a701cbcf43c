"""A trace in which no reader found a run, read again as a fork of a known reader's vocabulary.

A fork or a look-alike of an instrumentation keeps its shape under a namespace of its own
(`conventions/forked.py`): no reader claims its spans, or its reader finds no run. Each fork the
spans without a role carry is tried on the whole trace (every span gains the forked keys under the
reader's namespace, its own kept), and the reading whose reader gives the most forked spans a
role, a run among them, is the trace's, unless another reader's gives as many; a reading that
finds no run is no fork's, and the trace goes on to the vocabularies inferred from it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from otel_scorers.conventions import forks_of, reader_namespaces
from otel_scorers.conventions.base import Convention, SpanRole
from otel_scorers.span_record import SpanRecord


class Roles(Protocol):
    """A trace's roles as `span_roles` gives them."""

    roles: dict[int, tuple[Convention, SpanRole]]


R = TypeVar("R", bound=Roles)


def read_as_fork(
    spans: Sequence[SpanRecord], roleless: Sequence[SpanRecord], read: Callable[[list[SpanRecord]], R]
) -> R | None:
    """The roles of the trace read as the fork, of those its spans without a role carry, whose
    reader gives the most of the forked spans a role, a run among them; None when none does, or
    when two forks of different readers give as many (`acme.span.kind` may be OpenInference's or
    OpenLLMetry's: the shape alone does not say)."""
    forks = dict.fromkeys(fork for span in roleless for fork in forks_of(span.attributes))
    if not forks:
        return None
    scores: dict[frozenset[str], tuple[int, R]] = {}
    for fork in forks:
        unforked = [fork.unforked(span) for span in spans]
        forked = {after.span_id for before, after in zip(spans, unforked, strict=True) if after is not before}
        found = read(unforked)
        target = fork.target()
        given = [
            role
            for span_id, (convention, role) in found.roles.items()
            if span_id in forked and not target.isdisjoint(_namespaces(convention))
        ]
        if "run" in given and len(given) > scores.get(target, (0, found))[0]:
            scores[target] = (len(given), found)
    ranked = sorted((score for score, _ in scores.values()), reverse=True)
    if not ranked or (len(ranked) > 1 and ranked[0] == ranked[1]):
        return None
    return next(found for score, found in scores.values() if score == ranked[0])


_NAMESPACES: dict[str, frozenset[str]] = {}


def _namespaces(convention: Convention) -> frozenset[str]:
    """A reader's namespaces, remembered by its name."""
    found = _NAMESPACES.get(convention.name)
    if found is None:
        found = _NAMESPACES[convention.name] = reader_namespaces(convention)
    return found
