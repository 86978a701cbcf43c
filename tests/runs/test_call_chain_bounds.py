"""The join of model calls across traces within its bounds: what its open chains hold in bytes,
and each call finding the chain it continues among many open ones."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_scorers.model import AgentRun
from otel_scorers.otlp.decode import span_records
from otel_scorers.runs.call_chains import CallChains
from otel_scorers.runs.span_roles import span_roles
from tests.chain_stream import chain_call


def stream(conversations: int, steps: int, padding: int) -> list[ExportTraceServiceRequest]:
    """Each conversation's calls, the conversations' interleaved: every chain stays open."""
    return [chain_call(c, step, padding) for step in range(steps) for c in range(conversations)]


def fed(
    chains: CallChains, requests: list[ExportTraceServiceRequest], after: Callable[[], None] = lambda: None
) -> list[AgentRun]:
    runs = []
    for request in requests:
        runs.extend(chains.add(span_roles(span_records(request))))
        after()
    return runs


def test_what_open_chains_hold_is_never_more_than_they_count() -> None:
    requests = stream(20, 6, 300)
    fed(CallChains(), requests)  # what reading leaves behind for good (remembered kinds) first
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        chains = CallChains()
        fed(chains, requests)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert chains.open_chains == 20
    assert held > 500_000  # the stream's calls are held, 120 calls of about 4 KB and more
    assert chains.open_bytes >= held


def test_chains_past_the_byte_bound_are_read_oldest_first_and_counted() -> None:
    dropped: list[str] = []
    bound = 200_000
    chains = CallChains(max_bytes=bound, on_dropped=dropped.append)
    requests = stream(20, 6, 2_000)
    unbounded = CallChains()
    fed(unbounded, requests)
    assert unbounded.open_bytes > 5 * bound  # what the stream would hold without the bound
    seen: list[int] = []
    runs = fed(chains, requests, after=lambda: seen.append(chains.open_bytes))
    assert max(seen) <= bound
    assert chains.tally.closed_for_bytes > 0
    assert dropped.count("chain_bytes") == chains.tally.closed_for_bytes
    # A chain closed for the bytes is read as the run it makes so far: its input, its tool calls
    # (one of a lone call, that nothing says an agent made, is no run).
    assert runs and len(runs) == chains.tally.runs
    assert all(run.input is not None and run.input.startswith("conversation ") for run in runs)
    assert all(run.tool_calls for run in runs)
    # A call going on from a chain that was closed is not read as a run, and is counted.
    assert "chain_start_unseen" in dropped


def test_open_chains_hold_no_more_than_the_bound_even_while_a_chain_is_closed_for_it() -> None:
    # The sidecar's engine counts each chain closed for the bytes (a metric's callback) and hands
    # its run on while another thread may read what the chains hold: room is made before a chain
    # is put back, so no reader sees the bound passed.
    bound = 200_000
    seen: list[int] = []
    chains = CallChains(max_bytes=bound, on_dropped=lambda _: seen.append(chains.open_bytes))
    # Then a conversation whose first call is larger than several open chains together.
    fed(chains, [*stream(20, 6, 2_000), chain_call(99, 0, 60_000)])
    assert chains.tally.closed_for_bytes > 0 and seen
    assert max(seen) <= bound


def test_a_call_finds_the_chain_it_continues_among_thousands_open() -> None:
    chains = CallChains()
    fed(chains, stream(2_000, 1, 10))
    assert chains.open_chains == 2_000
    # The first conversation's second call: its tool's result continues the oldest open chain.
    assert list(chains.add(span_roles(span_records(chain_call(0, 1, 10))))) == []
    assert chains.open_chains == 2_000
    (run,) = [
        run for run in chains.rest() if run.input is not None and run.input.startswith("conversation 0:")
    ]
    assert [call.name for call in run.tool_calls] == ["lookup", "lookup"]
    assert chains.tally.unseen_start == 0
