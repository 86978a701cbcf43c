"""What every quick check is built from: the `Check` type, and the bounded regular-expression
search (`bounded_search`, `DEFAULT_REGEX_TIMEOUT_S`) that checks and schemas run user patterns
through. The checks themselves (`checks`, `json_checks`, `tool_args_check`, `trajectory_check`)
and `bounded_schema` import it; it imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import regex

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.evaluator_version import Evaluator
from otel_scorers.scorers.protocol import Lane

_NEEDS_NOTHING: frozenset[str] = frozenset()
#: How long one regular-expression search may take unless the binding allows less.
DEFAULT_REGEX_TIMEOUT_S = 30.0
#: Longest a `matches` search holds the interpreter lock before it goes on without it; less than
#: the interpreter's own switch interval (5 ms), so the host's threads never notice.
_HOLDING_LOCK_S = 0.001


@dataclass(frozen=True, slots=True)
class Check:
    """A quick check bound to its arguments. Fast and synchronous: the engine runs it inline.

    `retime` rebuilds a check whose cost depends on user input (a regular expression) with a
    time limit, so that `bind` can hold it to the binding's timeout. `fresh_scores`: each call of
    `score_run` returns a `Score` made for it and kept by nothing else (the checks' own factories),
    so the binding's labels and timing are written into it rather than into a copy.
    """

    name: str
    score_run: Callable[[AgentRun], Score] = field(repr=False)
    needs: frozenset[str] = _NEEDS_NOTHING
    binary: bool = True
    args: Mapping[str, Any] = field(default_factory=dict)
    retime: Callable[[float], Check] | None = field(default=None, repr=False, compare=False)
    fresh_scores: bool = field(default=False, repr=False, compare=False)
    lane: ClassVar[Lane] = "inline"

    def score(self, run: AgentRun) -> Score:
        return self.score_run(run)

    def within(self, timeout_s: float) -> Check:
        """This check held to `timeout_s` (itself when its cost does not depend on its input)."""
        return self.retime(timeout_s) if self.retime is not None else self

    def evaluator(self) -> Evaluator:
        """What made its results: the check's type and arguments."""
        return Evaluator(self.name, self.args)


def bounded_search(compiled: regex.Pattern[str], text: str, timeout_s: float) -> regex.Match[str] | None:
    """`compiled.search(text)` that gives up after `timeout_s`, holding the interpreter lock for at
    most `_HOLDING_LOCK_S`: nearly every search is over by then, and releasing the lock costs a
    contended process far more than the search (the lock comes back only at the next switch).
    `concurrent=False` is spelled out: left to its default, `regex` may release the lock during a
    search too (measured in the sidecar's scoring work, searches of a 41-character answer: 98 µs
    of wall time on average with the timeout and the default, 26 µs with `concurrent=False`)."""
    # By position (string, pos, endpos, concurrent, partial, timeout): keywords cost `regex` a
    # dict of them to parse, on every search.
    try:
        return compiled.search(text, None, None, False, False, min(timeout_s, _HOLDING_LOCK_S))
    except TimeoutError:
        if timeout_s <= _HOLDING_LOCK_S:
            raise
    return compiled.search(text, None, None, True, False, timeout_s - _HOLDING_LOCK_S)
