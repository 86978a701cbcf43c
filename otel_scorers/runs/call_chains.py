"""Runs that no span marks, joined from model calls across traces by conversation continuity.

Some instrumentations write no span for an agent's run and start a new trace at each model
call or message (OpenLIT's LlamaIndex and AG2 instrumentations, OpenLLMetry's Haystack one): the
run is only in the conversation its model calls carry. A model call in a trace that holds no run
*continues* an earlier call when its request is that call's request, then (optionally) that
call's answer, then results of tool calls that answer asked for, and nothing else: the agent
sent back what its tools returned. A request that adds a user message is a new run (a chat's
next turn), not the same one.

A chain of such calls is a run only on evidence that an agent made it, never because a model
was called: the calls were joined through tool results (a tool loop), or a call offered the
model tools, or a span around a call names an agent, or the call was given the instructions
(its system message) an earlier run shown so to be an agent's was given: the same agent's next
turn, answered without a tool (instrumentations that do not record the tools offered). A lone
model call with none of these (an application asking a model once) is no run.

The run is read as every run is (`run_reading`), its span the first call's: its input the first
user message of the first request, its answer the last call's final text, its tool calls those
the calls asked for, completed by the results sent back. Its scores attach to that first call's
span, in that call's trace (docs/emission.md).

A chain whose last call answered without asking for a tool is complete at once (only a tool's
result continues a run). One waiting for its tools' results is held within bounds
(`MAX_OPEN_CHAINS`, `MAX_CHAIN_BYTES`, `CHAIN_WINDOW_NS`, `MAX_CHAIN_CALLS`): when its last call
started longer than the window before the newest call seen it is built as it is, and so is the
oldest when too many are open or they hold too many bytes, or one grown too long; those closed
early for the count, the bytes or the length are counted (`ChainTally.closed_early`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from otel_scorers.conventions import Convention
from otel_scorers.conventions.base import Message, ModelCall
from otel_scorers.conventions.formats.messages import last_user_text, tool_call_parts, tool_response_parts
from otel_scorers.conventions.formats.parsed_texts import parsed_once
from otel_scorers.model import AgentRun
from otel_scorers.runs.agent_names import graph_name, named_by_keys
from otel_scorers.runs.ancestry import MAX_DEPTH
from otel_scorers.runs.held_bytes import held_bytes
from otel_scorers.runs.open_chains import OpenChains, entry_bytes
from otel_scorers.runs.recorded_units import unit_of_work_name
from otel_scorers.runs.run_parts import RunParts
from otel_scorers.runs.run_reading import read_run
from otel_scorers.runs.span_roles import SpanRoles
from otel_scorers.span_record import SpanRecord
from otel_scorers.throttled_log import throttled

#: Most chains of model calls held open at once, waiting for a call that continues them; beyond,
#: the least recently continued is built as it is (and counted).
MAX_OPEN_CHAINS = 10_000
#: Most bytes the open chains hold together (their calls' spans and messages, `held_bytes`):
#: beyond, the least recently continued is built as it is (and counted), so that a stream of
#: many long chains cannot hold memory without bound, whatever the count and length allow.
MAX_CHAIN_BYTES = 64 * 1024 * 1024
#: A chain whose last call started this long before the newest call seen is taken as complete:
#: the longest a tool may run between two calls of one run (5 minutes).
CHAIN_WINDOW_NS = 300 * 1_000_000_000
#: Most model calls one chain holds: a run of more is read as it is at this many (and counted),
#: so that one endless tool loop cannot hold memory without bound.
MAX_CHAIN_CALLS = 1_000
#: Most agents' instructions remembered, to know a lone call given them as their next turn; beyond,
#: the least recently given are forgotten (such a call is then no run, as without them).
MAX_AGENT_INSTRUCTIONS = 1_000
#: Where a joined run's text came from, as `AgentRun.text_sources` and `--explain` say it.
FROM_JOINED_CALLS = "from model calls joined across traces by their conversation"


@dataclass(slots=True)
class ChainTally:
    """What joining did: runs built from chains, and chains closed early to stay in bounds."""

    runs: int = 0
    closed_early: int = 0
    #: Of those, closed for the bytes the open chains held (`MAX_CHAIN_BYTES`).
    closed_for_bytes: int = 0
    #: Chains whose first request ends with tools' results: they go on from a call not seen (its
    #: trace not kept, or let go), so the run they belong to cannot be read whole. Not runs.
    unseen_start: int = 0


@dataclass(slots=True)
class _Call:
    convention: Convention
    span: SpanRecord
    call: ModelCall
    agent: str | None
    offered_tools: bool
    #: The ids of the tool calls its answer asked for: only their results continue it.
    asked: frozenset[str]


@dataclass(slots=True)
class _Chain:
    calls: list[_Call] = field(default_factory=list)
    #: What its calls hold in memory (`held_bytes`), counted as each joins it.
    size: int = 0

    @property
    def last(self) -> _Call:
        return self.calls[-1]


class CallChains:
    """Model calls of traces without runs, joined into runs (see the module's docstring)."""

    def __init__(
        self,
        max_open: int = MAX_OPEN_CHAINS,
        window_ns: int = CHAIN_WINDOW_NS,
        on_joined: Callable[[AgentRun, tuple[int, ...]], None] | None = None,
        on_dropped: Callable[[str], None] | None = None,
        max_bytes: int = MAX_CHAIN_BYTES,
    ) -> None:
        """`on_joined`: told of each run built, with the trace ids of its calls (`--explain`);
        `on_dropped`: told why each chain is not read whole (`chain_limit`, `chain_bytes`,
        `chain_start_unseen`), for a metric."""
        self.max_open = max_open
        self.max_bytes = max_bytes
        self.window_ns = window_ns
        self._on_joined = on_joined
        self._on_dropped = on_dropped
        self.tally = ChainTally()
        self._open: OpenChains[_Chain] = OpenChains()  # by the last call's span id
        self._newest_ns = 0
        #: The instructions of the agents whose runs were built (`_instructions`), most recent last.
        self._agents: OrderedDict[int, None] = OrderedDict()

    @property
    def open_chains(self) -> int:
        return len(self._open)

    @property
    def open_bytes(self) -> int:
        """What the open chains hold, as counted (never more than `max_bytes`)."""
        return self._open.bytes

    def add(self, found: SpanRoles) -> Iterator[AgentRun]:
        """Take the model calls of one trace that holds no run; the runs of chains now complete."""
        for call in _loose_calls(found):
            self._newest_ns = max(self._newest_ns, call.span.start_ns)
            chain = self._continued(call)
            if chain is None:
                chain = _Chain()
            chain.calls.append(call)
            if not tool_call_parts(call.call.output.items):
                yield from self._built(chain)  # answered: only a tool's result would continue it
                continue
            if len(chain.calls) >= MAX_CHAIN_CALLS:
                self._closed_early("chain_limit")
                yield from self._built(chain)
                continue
            chain.size += held_bytes(call.span, call.call, call.asked, call.agent)
            # Room is made before the chain is put back, so that the open chains never hold more
            # than `max_bytes`, even to a reader on another thread between two calls' work.
            incoming = entry_bytes(chain.size, call.asked)
            yield from self._within_bytes(incoming)
            if incoming > self.max_bytes:
                yield from self._closed_for_bytes(chain)
                continue
            self._open.put(call.span.span_id, chain, call.asked, chain.size)
            if len(self._open) > self.max_open:
                self._closed_early("chain_limit")
                throttled.warning(
                    "chain_limit",
                    "otel_scorers: more than %d chains of model calls wait for their tools' results; "
                    "the oldest is read as the run it makes so far",
                    self.max_open,
                )
                yield from self._built(self._open.take_oldest())
        yield from self.due()

    def _within_bytes(self, incoming: int) -> Iterator[AgentRun]:
        """Read the least recently continued chains as they are until the rest and a chain of
        `incoming` bytes fit `max_bytes`."""
        while self._open.bytes + incoming > self.max_bytes and len(self._open):
            yield from self._closed_for_bytes(self._open.take_oldest())

    def _closed_for_bytes(self, chain: _Chain) -> Iterator[AgentRun]:
        self._closed_early("chain_bytes")
        self.tally.closed_for_bytes += 1
        throttled.warning(
            "chain_bytes",
            "otel_scorers: the chains of model calls waiting for their tools' results hold more "
            "than %d bytes; the oldest is read as the run it makes so far",
            self.max_bytes,
        )
        yield from self._built(chain)

    def _closed_early(self, reason: str) -> None:
        self.tally.closed_early += 1
        self._dropped(reason)

    def due(self) -> Iterator[AgentRun]:
        """The runs of chains not continued within the window."""
        while (oldest := self._open.oldest()) is not None:
            if oldest[1].last.span.start_ns > self._newest_ns - self.window_ns:
                return
            yield from self._built(self._open.take(oldest[0]))

    def rest(self) -> Iterator[AgentRun]:
        """The runs of every chain still open, once nothing more will come."""
        while len(self._open):
            yield from self._built(self._open.take_oldest())

    def _dropped(self, reason: str) -> None:
        if self._on_dropped is not None:
            self._on_dropped(reason)

    def _continued(self, call: _Call) -> _Chain | None:
        request = call.call.input.items
        # A call continues only a chain whose last call asked for a tool it sends a result of:
        # those are found by their ids (`OpenChains`), the others never looked at.
        for key, chain in self._open.asking(_ids(tool_response_parts(request))):
            if _continues(request, chain.last):
                self._open.take(key)
                return chain
        return None

    def _built(self, chain: _Chain) -> Iterator[AgentRun]:
        calls = chain.calls
        first = calls[0]
        if _only_tool_results(first.call.input.items[-1]):
            self.tally.unseen_start += 1
            self._dropped("chain_start_unseen")
            throttled.warning(
                "chain_start_unseen",
                "otel_scorers: a model call goes on from a call whose trace was not seen (not "
                "sampled, let go, or past the window): its run cannot be read whole and is not scored",
            )
            return
        agent = next((call.agent for call in calls if call.agent is not None), None)
        instructions = _instructions(first.call.input.items)
        if (
            len(calls) < 2
            and agent is None
            and not any(call.offered_tools for call in calls)
            and (instructions is None or instructions not in self._agents)
        ):
            return  # a model asked once, by nothing that says it is an agent: no run
        if instructions is not None:
            self._agents[instructions] = None
            self._agents.move_to_end(instructions)
            if len(self._agents) > MAX_AGENT_INSTRUCTIONS:
                self._agents.popitem(last=False)
        parts = RunParts(first.span, first.convention, given_name=agent)
        parts.models = [(call.convention, call.span) for call in calls]
        with parsed_once():
            run = read_run(parts)
        sources = {**run.text_sources}
        for side in ("input", "output"):
            if sources.get(side) is not None or getattr(run, side) is not None:
                sources[side] = FROM_JOINED_CALLS
        self.tally.runs += 1
        end_ns = max(call.span.end_ns or call.span.start_ns for call in calls)
        run = replace(run, end_ns=end_ns, text_sources=sources)
        if self._on_joined is not None:
            self._on_joined(run, tuple(dict.fromkeys(call.span.trace_id for call in calls)))
        yield run


def _loose_calls(found: SpanRoles) -> list[_Call]:
    """The trace's model calls that carry their request and answer, the lowest layer of each (a framework's
    span around the client's call of the same model is the same call), in start order."""
    models = {span_id: convention for span_id, (convention, role) in found.roles.items() if role == "model"}
    around_models: set[int] = set()
    for span_id in models:
        parent = found.by_id[span_id].parent_span_id
        for _ in range(MAX_DEPTH):
            if parent is None or parent in around_models:
                break
            if parent in models:
                around_models.add(parent)
            span = found.by_id.get(parent)
            parent = span.parent_span_id if span is not None else None
    calls: list[_Call] = []
    for span_id, convention in models.items():
        if span_id in around_models:
            continue
        span = found.by_id[span_id]
        call = convention.model_call(span)
        if not (call.input.items and call.output.items):
            continue  # a call whose request or answer is not in the trace joins nothing
        offered = bool(convention.tool_definitions(span))
        asked = _ids(tool_call_parts(call.output.items))
        calls.append(_Call(convention, span, call, _agent_around(span, found, call), offered, asked))
    return sorted(calls, key=lambda call: call.span.start_ns)


def _agent_around(span: SpanRecord, found: SpanRoles, call: ModelCall) -> str | None:
    """The agent a span around the call names by any convention's keys, else the graph the
    outermost span around it that runs a graph names (`agent_names.graph_name`), up to the tool
    span that ran it, if any (a graph a tool runs is an agent of its own), else the unit of work
    around it that recorded its request (`recorded_units`)."""
    graph: str | None = None
    parent = span.parent_span_id
    for _ in range(MAX_DEPTH):
        around = found.by_id.get(parent) if parent is not None else None
        if around is None:
            break
        name = named_by_keys(around)
        if name is not None:
            return name
        role = found.roles.get(around.span_id)
        if role is not None and role[1] == "tool":
            break
        graph = graph_name(around) or graph
        parent = around.parent_span_id
    return graph or unit_of_work_name(span, found, last_user_text(call.input.items))


def _continues(request: Sequence[Message], earlier_call: _Call) -> bool:
    """Whether `request` is the earlier call's request, then optionally its answer, then only
    results of tool calls that answer asked for (at least one)."""
    earlier = earlier_call.call
    before = earlier.input.items
    if len(request) <= len(before) or not earlier.output.captured:
        return False
    if [_shape(message) for message in request[: len(before)]] != [_shape(message) for message in before]:
        return False
    rest = list(request[len(before) :])
    answer = earlier.output.items
    if (
        answer
        and len(rest) > len(answer)
        and [_shape(m) for m in rest[: len(answer)]] == [_shape(m) for m in answer]
    ):
        rest = rest[len(answer) :]
    asked = earlier_call.asked
    if not asked or not rest:
        return False
    for message in rest:
        if not _only_tool_results(message):
            return False  # anything but tool results: a new user message, a new turn
        if any(str(part.get("id")) not in asked for part in message.get("parts", ())):
            return False
    return True


def _ids(parts: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """The ids of tool-call or tool-result parts, as text (a part without one has none)."""
    return frozenset(str(part.get("id")) for part in parts if part.get("id") is not None)


def _instructions(request: Sequence[Message]) -> int | None:
    """The instructions a request opens with (its system message, `_shape`), as their hash (a
    remembered agent's costs a number, however long its prompt); None without them."""
    if not request or request[0].get("role") != "system":
        return None
    return hash(_shape(request[0]))


def _only_tool_results(message: Message) -> bool:
    parts = message.get("parts", ())
    return bool(parts) and len(tool_response_parts([message])) == len(parts)


def _shape(message: Message) -> tuple[Any, ...]:
    """What identifies a message when two spans of one conversation record it: its role and its
    parts' kind, text, call id and name (instrumentations differ in the keys they add)."""
    return (
        message.get("role"),
        tuple(
            (part.get("type"), part.get("content"), part.get("id"), part.get("name"))
            for part in message.get("parts", ())
        ),
    )


def joined_runs(traces: Iterable[SpanRoles]) -> list[AgentRun]:
    """Every run joined from the model calls of `traces` (each one trace holding no run)."""
    chains = CallChains()
    runs = [run for found in traces for run in chains.add(found)]
    return [*runs, *chains.rest()]
