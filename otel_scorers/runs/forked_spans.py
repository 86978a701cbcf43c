"""A trace in which no reader found a run, read again as a fork of a known reader's vocabulary.

A fork or a look-alike of an instrumentation keeps its shape under a namespace of its own
(`conventions/forked.py`): no reader claims its spans, or its reader finds no run. Each fork the
spans without a role carry is tried on the whole trace (every span gains the forked keys under the
reader's namespace, its own kept), and the reading whose reader gives the most forked spans a
role, a run among them, is the trace's, unless another reader's gives as many; a reading that
finds no run, or a run whose agent it does not name (AgentOps' fork of OpenLLMetry's keys), is
no fork's, and the trace goes on to the vocabularies inferred from it. A fork's reading counts
only when its reader gives a forked span a role by the values it carries: that is asked of the
forked spans first (as each is detected), and a trace whose forked spans no such reader gives a
role, nor could by its place (a span no reader claims, named as an agent's run), is not read
again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol, TypeVar

from otel_scorers.conventions import forks_of_spans
from otel_scorers.conventions.base import Convention, SpanRole
from otel_scorers.conventions.forked import Fork
from otel_scorers.conventions.genai import AGENT_RUN_PREFIXES
from otel_scorers.conventions.namespaces import reader_namespaces
from otel_scorers.conventions.unscoped import UnscopedTwin
from otel_scorers.runs.agent_names import agent_name
from otel_scorers.span_record import SpanRecord


class Roles(Protocol):
    """A trace's roles as `span_roles` gives them."""

    roles: dict[int, tuple[Convention, SpanRole]]


R = TypeVar("R", bound=Roles)
#: A span's reader and the role it gives the span, as detected (`span_roles`), before its place
#: in the trace speaks.
Detected = Callable[[SpanRecord], tuple[Convention | None, SpanRole | None]]


def read_as_fork(
    spans: Sequence[SpanRecord],
    roleless: Sequence[SpanRecord],
    read: Callable[[list[SpanRecord]], R],
    detected: Detected,
) -> R | None:
    """The roles of the trace read as the fork, of those its spans without a role carry, whose
    reader gives the most of the forked spans a role, a run among them, each forked run's agent
    named (`agent_names`: a fork keeping the name elsewhere is read by what the trace shows);
    a fork under a reader's namespace before one dropping a vendor's prefix. None when none does,
    or when forks of two readers give as many (`acme.span.kind` may be OpenInference's or
    OpenLLMetry's: the shape alone does not say). `detected`: a span's reader and role as detected."""
    forks = forks_of_spans(roleless)
    for under_namespace in (True, False):
        scores: dict[frozenset[str], tuple[int, R]] = {}
        for fork in forks:
            if bool(fork.namespace) == under_namespace:
                _score(fork, spans, (read, detected), scores)
        if scores:
            ranked = sorted((score for score, _ in scores.values()), reverse=True)
            if len(ranked) > 1 and ranked[0] == ranked[1]:
                return None
            return next(found for score, found in scores.values() if score == ranked[0])
    return None


def _score(
    fork: Fork,
    spans: Sequence[SpanRecord],
    readers: tuple[Callable[[list[SpanRecord]], R], Detected],
    scores: dict[frozenset[str], tuple[int, R]],
) -> None:
    """Read the trace as `fork`'s; keep the reading in `scores` when it is its reader's best."""
    read, detected = readers
    unforked = {span.span_id: (span, fork.unforked(span)) for span in spans}
    target = fork.target()
    if not _may_read_by_values(unforked.values(), target, detected):
        return
    found = read([after for _, after in unforked.values()])
    given: list[SpanRole] = []
    by_values = False  # the reader itself gives a forked span a role, by the values it carries
    for span_id, (convention, role) in found.roles.items():
        pair = unforked.get(span_id)
        if pair is None or pair[1] is pair[0]:
            continue
        after = pair[1]
        if role == "run" and not agent_name(after, convention.run_content(after).agent_name):
            return  # a run whose agent the fork does not name: it keeps the name elsewhere
        # A tracer read under a scope no reader knows by the keys the fork gained is no reading
        # of the fork as the reader whose keys they are.
        if not target.isdisjoint(_namespaces(convention)) and type(convention) is not UnscopedTwin:
            given.append(role)
            by_values = by_values or convention.role(after) is not None
    if by_values and "run" in given and len(given) > scores.get(target, (0, found))[0]:
        scores[target] = (len(given), found)


def _may_read_by_values(
    pairs: Iterable[tuple[SpanRecord, SpanRecord]], target: frozenset[str], detected: Detected
) -> bool:
    """Whether the forked reader may give a forked span a role by the values it carries: one of
    the forked spans is given a role, as detected, by a reader of the fork's namespaces, or is
    claimed by no reader and named as an agent's run (a run by the spans under it, read by theirs).
    A forked span's reader otherwise is its own, which gave it no role, or one of a vocabulary
    inferred from the trace, outside every reader's namespaces."""
    for span, after in pairs:
        if after is span:
            continue
        convention, role = detected(after)
        if convention is None:
            if after.name.startswith(AGENT_RUN_PREFIXES):
                return True
        elif role is not None and not target.isdisjoint(_namespaces(convention)):
            return True
    return False


_NAMESPACES: dict[str, frozenset[str]] = {}


def _namespaces(convention: Convention) -> frozenset[str]:
    """A reader's namespaces, remembered by its name."""
    found = _NAMESPACES.get(convention.name)
    if found is None:
        found = _NAMESPACES[convention.name] = reader_namespaces(convention)
    return found
