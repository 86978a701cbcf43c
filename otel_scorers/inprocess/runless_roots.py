"""Counting the traces whose root span ended with no agent run in them (`otel_scorers.traces.no_run`),
from the roots the agent's thread noted as they ended, on the engine's thread."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable
from typing import Any

from otel_scorers.runs.no_run import RunlessTraces
from otel_scorers.span_record import OWN_SCOPE
from otel_scorers.throttled_log import throttled


def count_runless(
    ended: deque[tuple[Any, Any]],
    had_run: dict[int, None],
    could_sample: Callable[[int], bool],
    runless: RunlessTraces | None,
) -> None:
    """Count, by instrumentation scope, the traces among `ended` roots in which no run started
    (on the engine's thread, while the agent's thread may still append to `ended`)."""
    if ended.maxlen is not None and len(ended) >= ended.maxlen:
        # The deque let its oldest roots go uncounted (counting each drop would cost the agent's
        # thread more than the append): the count is a lower bound, and that is said.
        throttled.warning(
            "runless_roots_full",
            "otel_scorers: more than %d traces ended between two counts of traces without an agent "
            "run; some were not counted (otel_scorers.traces.no_run is a lower bound; max_traces "
            "bounds them)",
            ended.maxlen,
        )
    # Tallied by scope object first, as runs of the same scope (the spans of a tracer share its
    # scope, and roots mostly follow roots of the same tracer), each scope's name read once: the
    # name is a property, and hashing a scope calls its Python `__hash__`.
    tallies: dict[int, list[Any]] = {}
    scope_now: Any = None
    count_now = 0
    popleft = ended.popleft
    for _ in range(len(ended)):  # what is appended meanwhile waits for the next pass
        try:
            context, scope = popleft()
        except IndexError:  # emptied meanwhile by a flush on another thread
            break
        trace_id = context[0]
        # Counted among the traces sampling could pick, as the sidecar counts them. A root whose
        # ids are not OTLP's (a SpanContext's sixth item, `is_valid`) was counted as dropped.
        if context[5] and trace_id not in had_run and could_sample(trace_id):
            if scope is scope_now:
                count_now += 1
            else:
                _tally(tallies, scope_now, count_now)
                scope_now, count_now = scope, 1
    _tally(tallies, scope_now, count_now)
    counts: Counter[str | None] = Counter()
    for scope, count in tallies.values():
        name = getattr(scope, "name", None)
        if name != OWN_SCOPE:
            counts[name] += count
    if runless is not None:
        for name, count in counts.items():
            runless.add(name, count)


def _tally(tallies: dict[int, list[Any]], scope: Any, count: int) -> None:
    """Add `count` traces to `scope`'s tally (by the scope object's identity)."""
    if count:
        tallies.setdefault(id(scope), [scope, 0])[1] += count
