"""Runs joined across traces by a handoff: a run whose last tool call hands the conversation to an
agent (`agent_name`) that its trace does not run goes on in the run of that agent at the root of
a later trace.

An instrumentation that suppresses the span a team of agents runs under (a swarm's) leaves each
agent's run at the root of a trace of its own: nothing ties the traces but what the runs hold.
The trace of such a handing run is held, within bounds, for the run it handed to; a later trace
continues it when its root run:

- is of the agent the handoff names, written by the same resource (process) as the handing run,
- starts after the handoff and at most `HANDOFF_WINDOW_NS` after the handing run ended, and
- carries the conversation on: its request is the handing run's request, or holds the message
  the handoff passed (a string argument of the call other than the agent's name).

With content capture off none of this can be seen: the runs stay apart. The two traces' spans are
then read as one trace is (`build_runs`), so the handoff is joined by the rule that joins one
within a trace (`run_assembly`): one run, the first agent's, with every agent's tool calls and the
last one's answer. Its scores attach to the handing run's span, in its trace.

A held trace not continued within the window (by the newest run start seen), or the oldest when
more than `MAX_HELD_TRACES` traces or `MAX_HELD_SPANS` spans are held, gives its runs as they are.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from otel_scorers.conventions.formats.messages import handoff_agent
from otel_scorers.model import AgentRun
from otel_scorers.runs.ancestry import MAX_DEPTH
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanRecord

#: Longest a run handed to starts after the handing run ended (as the in-process door waits for
#: a handoff to be taken up: `inprocess.assembler.HANDOFF_WAIT_S`).
HANDOFF_WINDOW_NS = 3 * 1_000_000_000
#: Most traces held at once for the run their handoff passed to; beyond, the oldest gives its runs.
MAX_HELD_TRACES = 1_000
#: Most spans those traces hold together; beyond, the oldest give their runs.
MAX_HELD_SPANS = 100_000
#: Shortest handoff message looked for in the request of the run handed to (a shorter string
#: argument says too little to tie two runs).
MIN_MESSAGE_CHARS = 8


@dataclass(frozen=True, slots=True)
class _Handing:
    """A run that hands the conversation to `target`, which its trace does not run."""

    run: AgentRun
    target: str
    start_ns: int
    messages: tuple[str, ...]


@dataclass(slots=True)
class _Held:
    spans: list[SpanRecord]
    runs: list[AgentRun]
    handing: _Handing


class HandedTraces:
    """Traces whose run handed the conversation on to an agent they do not run, held for the
    trace of that agent's run (see the module's docstring)."""

    def __init__(
        self,
        window_ns: int = HANDOFF_WINDOW_NS,
        max_held: int = MAX_HELD_TRACES,
        on_joined: Callable[[AgentRun, AgentRun], None] | None = None,
    ) -> None:
        """`on_joined`: told of each handing run and the run (in a later trace) that continued it
        (`--explain`)."""
        self.window_ns = window_ns
        self.max_held = max_held
        self._on_joined = on_joined
        self._held: OrderedDict[int, _Held] = OrderedDict()  # by the handing run's span id
        self._held_spans = 0
        self._newest_ns = 0
        #: Runs joined across traces, and held traces given up (their runs given as they are).
        self.joined = 0
        self.given_up = 0

    @property
    def held(self) -> int:
        return len(self._held)

    def add(self, spans: list[SpanRecord], runs: list[AgentRun]) -> Iterator[AgentRun]:
        """Take one trace's spans and the runs built from them; the runs now due."""
        for run in runs:
            self._newest_ns = max(self._newest_ns, run.start_ns)
        for key, held in self._held.items():
            follower = next((run for run in runs if _continues(run, held.handing, self.window_ns)), None)
            if follower is not None:
                del self._held[key]
                self._held_spans -= len(held.spans)
                together = held.spans + spans
                joined = _built(together)
                if joined is not None and len(joined) < len(held.runs) + len(runs):
                    self.joined += 1
                    spans, runs = together, joined
                    if self._on_joined is not None:
                        self._on_joined(held.handing.run, follower)
                else:  # the rule within a trace did not join them: each as it was
                    yield from held.runs
                break
        yield from self.due()
        handing = _handing(runs)
        if handing is None:
            yield from runs
            return
        self._held[handing.run.span_id] = _Held(spans, runs, handing)
        self._held_spans += len(spans)
        yield from self.due()  # beyond the bounds

    def due(self) -> Iterator[AgentRun]:
        """The runs of held traces not continued within the window, or beyond the bounds."""
        while self._held:
            key, oldest = next(iter(self._held.items()))
            over = len(self._held) > self.max_held or self._held_spans > MAX_HELD_SPANS
            if not over and oldest.handing.run.end_ns + self.window_ns >= self._newest_ns:
                return
            yield from self._given_up(key)

    def rest(self) -> Iterator[AgentRun]:
        """The runs of every trace still held, once nothing more will come."""
        while self._held:
            yield from self._given_up(next(iter(self._held)))

    def _given_up(self, key: int) -> Iterator[AgentRun]:
        held = self._held.pop(key)
        self._held_spans -= len(held.spans)
        self.given_up += 1
        yield from held.runs


def _built(spans: list[SpanRecord]) -> list[AgentRun] | None:
    """The runs of two traces' spans read as one trace, or None when they cannot be (spans no
    reader foresaw: each trace's runs stand as they were built)."""
    try:
        return build_runs(spans)
    except Exception:
        return None


def _handing(runs: Sequence[AgentRun]) -> _Handing | None:
    """The trace's run whose last tool call hands the conversation to an agent no run of the trace
    is (nor was handed to within it), if one does."""
    agents = {run.agent_name for run in runs} | {run.final_agent for run in runs}
    for run in runs:
        if not run.tool_calls:
            continue
        call = max(run.tool_calls, key=lambda item: item.start_ns or 0)
        target = handoff_agent(call.arguments) if call.state == "ok" else None
        if target is None or target in agents or any(item.to_agent == target for item in run.handoffs):
            continue
        arguments: dict[str, Any] = call.arguments if isinstance(call.arguments, dict) else {}
        messages = tuple(
            value
            for value in arguments.values()
            if isinstance(value, str) and value != target and len(value.strip()) >= MIN_MESSAGE_CHARS
        )
        return _Handing(run, target, call.start_ns or run.start_ns, messages)
    return None


def _continues(run: AgentRun, handing: _Handing, window_ns: int) -> bool:
    """`run` is the run `handing` passed the conversation to (see the module's docstring)."""
    first = handing.run
    if (
        run.parent_span_id is not None
        or run.agent_name != handing.target
        or run.resource != first.resource
        or not handing.start_ns <= run.start_ns <= first.end_ns + window_ns
    ):
        return False
    if first.input and run.input == first.input:
        return True
    return any(
        _holds(run.input_messages, message) or message in (run.input or "") for message in handing.messages
    )


def _holds(value: Any, text: str, depth: int = 0) -> bool:
    """Whether a string inside `value` (messages: dicts and lists of them, looked into at most
    `MAX_DEPTH` deep) contains `text`."""
    if isinstance(value, str):
        return text in value
    if depth >= MAX_DEPTH:
        return False
    if isinstance(value, dict):
        return any(_holds(item, text, depth + 1) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_holds(item, text, depth + 1) for item in value)
    return False
