"""Checks whose cost grows with what they check (the schema checks, `json_schema` and
`tool_args_valid`), scored off the event loop when a run gives them much to check.

A schema check of a large document keeps to the binding's timeout (`Check.within`: every keyword
looks at the deadline), but on the loop that timeout is time no other score, and no span taken
in, moves. So a run whose documents are longer than `INLINE_CHARS` in all (text, or JSON the
trace carried decoded, walked that far) is checked on threads of their own:
the loop goes on, the binding's timeout ends the wait (a `timeout` error), and the check itself
stops at the same deadline, so a thread is not held past it. A short document, nearly every one,
is checked in place: a thread's round trip would cost more.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.evaluator_version import Evaluator
from otel_scorers.scorers.protocol import Lane
from otel_scorers.scorers.quick_check import Check
from otel_scorers.scorers.sync_workers import SyncWorkers

#: Characters of documents checked on the loop: a few milliseconds of validation at most.
INLINE_CHARS = 10_000
#: Threads checking at once, shared by every offloaded check; more runs wait their turn within
#: their bindings' timeouts.
CHECK_THREADS = 2

_threads = SyncWorkers("schema checks", CHECK_THREADS)


@dataclass(frozen=True, slots=True)
class OffloadedCheck:
    """`check`, scored on threads when `size(run)` (characters to check) exceeds `INLINE_CHARS`."""

    check: Check
    size: Callable[[AgentRun], int]
    lane: ClassVar[Lane] = "async"

    @property
    def name(self) -> str:
        return self.check.name

    @property
    def needs(self) -> frozenset[str]:
        return self.check.needs

    @property
    def binary(self) -> bool:
        return self.check.binary

    @property
    def args(self) -> Mapping[str, Any]:
        return self.check.args

    def score(self, run: AgentRun) -> Score | Awaitable[Score]:
        if self.size(run) <= INLINE_CHARS:
            return self.check.score_run(run)
        scored: Awaitable[Score] = _threads.run(self.check.score_run, run)
        return scored

    def within(self, timeout_s: float) -> OffloadedCheck:
        """Held to `timeout_s`, as `Check.within`."""
        return replace(self, check=self.check.within(timeout_s))

    def evaluator(self) -> Evaluator:
        return self.check.evaluator()


def text_size(value: Any) -> int:
    """About how many characters `value` (a text, or JSON already decoded) holds, counted up to
    a little past `INLINE_CHARS` only: a structure is walked no further than that."""
    if value is None:
        return 0
    if isinstance(value, str):
        return len(value)
    size = 0
    waiting = [value]
    while waiting and size <= INLINE_CHARS:
        item = waiting.pop()
        size += 1
        if isinstance(item, str):
            size += len(item)
        elif isinstance(item, Mapping):
            waiting.extend(item.keys())
            waiting.extend(item.values())
        elif isinstance(item, (list, tuple)):
            waiting.extend(item)
    return size
