"""The in-process assembler's traces whose runs have all ended but are kept open: a run handed
the conversation on to an agent whose run starts only after it (AutoGen's Swarm), or a trace
opened at a run marked after it started, whose root may still end around it (`late_marks`)."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable

from otel_scorers.inprocess.buffered_trace import BufferedTrace, CompletedTrace

logger = logging.getLogger("otel_scorers")


class WaitingTraces:
    """Traces whose runs have all ended, kept open for a run yet to start or end in them (a
    handoff taken up later, a run around them marked late): completed when it does, or after
    `handoff_wait_s` on the engine's thread. The state is the `TraceAssembler`'s."""

    _lock: threading.Lock
    _traces: dict[int, BufferedTrace]
    _waiting: dict[int, BufferedTrace]
    _given_up: OrderedDict[int, None]
    _max_traces: int
    _on_completed: Callable[[CompletedTrace], None]
    clock: Callable[[], float]

    @property
    def waiting_traces(self) -> int:
        """Traces whose runs have all ended, kept open for the run a handoff passed to."""
        return len(self._waiting)

    def _root_ended(self, trace_id: int, buffer: BufferedTrace) -> None:
        """The root in this process of a trace opened at a run marked late ended: no run around
        its runs is left to end, and the trace, when it waits, is complete."""
        with self._lock:
            buffer.marked_late = False
            if self._waiting.pop(trace_id, None) is not buffer:
                return
            buffer.waiting_until = None
            if self._traces.get(trace_id) is buffer:
                del self._traces[trace_id]
        self._on_completed(buffer.completed())

    def complete_expired(self) -> None:
        """Complete the traces whose handoff was not taken up within `handoff_wait_s`: called
        periodically on the engine's thread."""
        self._complete_waiting(all_of_them=False)

    def complete_waiting(self) -> None:
        """Complete every trace waiting for a handoff to be taken up (a flush, a shutdown)."""
        self._complete_waiting(all_of_them=True)

    def _complete_waiting(self, all_of_them: bool) -> None:
        if not self._waiting:
            return
        now = self.clock()
        completed: list[BufferedTrace] = []
        with self._lock:
            for trace_id, buffer in list(self._waiting.items()):
                if not all_of_them and (buffer.waiting_until is None or buffer.waiting_until > now):
                    continue
                del self._waiting[trace_id]
                if self._traces.get(trace_id) is buffer:
                    del self._traces[trace_id]
                completed.append(buffer)
                _remember(self._given_up, trace_id, self._max_traces)
        for buffer in completed:
            # The handoff may have ended the conversation (a Swarm handing back to the user).
            logger.debug("otel_scorers: a trace's handoff was not taken up; scoring its runs as they are")
            self._on_completed(buffer.completed())


def _remember(recent: OrderedDict[int, None], trace_id: int, most: int) -> None:
    """Note `trace_id` among the `most` most recent (the oldest is the first)."""
    recent[trace_id] = None
    if len(recent) > most:
        recent.popitem(last=False)
