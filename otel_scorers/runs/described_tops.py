"""A described tracer's unit of work at the top of a trace in which nothing found a run.

A description's run clauses say which of its tracer's spans are runs over the framework it was
written from; over another, they may find none, and the vocabulary its spans show may mark no
run either (a kind key whose runs' value is its default, `DEFAULT`, or names a record, not an
agent). Its tool and model clauses still read the calls. Then, as for a vocabulary that marks no
agent (`top_runs`), a root span its reader claimed without a role is the run of the model calls
under it that no run holds: the application's outermost unit of work around the calls, which
holds only agents a tool ran, if any. Its reader reads no run, so the run is read by the rules
every reader shares: its request and answer from the generic keys and its own record's keys
(`generic_io`), its name from the keys every reader shares, else its span's own name when that is a name
(`loop_units.unit_reader`), else from the span-name forms every reader shares, or its span's
name when it recorded the request (`run_parts`).
"""

from __future__ import annotations

from collections.abc import Mapping

from otel_scorers.conventions import Convention, SpanRole
from otel_scorers.conventions.described import DescribedConvention
from otel_scorers.conventions.inferred_names import name_keys_name_steps
from otel_scorers.runs.loop_units import unit_reader
from otel_scorers.runs.tool_invoked_agents import only_tool_invoked_runs
from otel_scorers.runs.top_runs import top_level_runs
from otel_scorers.span_record import SpanRecord


def described_top_runs(
    by_id: Mapping[int, SpanRecord],
    roles: dict[int, tuple[Convention, SpanRole]],
    unroled: dict[int, Convention],
) -> None:
    """Make a run of each root span a reader claimed without a role, around model calls no run
    holds, in a trace whose only runs, if any, are agents a tool ran (module doc)."""
    if only_tool_invoked_runs(by_id, roles):
        roots = [span_id for span_id, span in by_id.items() if span.parent_span_id is None]
        unrun = [span_id for span_id in roots if roles.get(span_id, (None, None))[1] != "run"]
        top_level_runs(roots, by_id, roles, unroled, any_reader=True)
        by_keys = None
        for span_id in unrun:
            reader, role = roles.get(span_id, (None, None))
            if role == "run" and isinstance(reader, DescribedConvention):
                if by_keys is None:  # the keys every reader shares may name a graph's steps
                    by_keys = not name_keys_name_steps(list(by_id.values()))
                roles[span_id] = (unit_reader(reader, by_keys), "run")
