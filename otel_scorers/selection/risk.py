"""Risk signals: what the pipeline already knows about a run, before any judge, that makes it
worth judging more often.

A run's weight is 1 plus, for each signal it shows, that signal's weight minus 1 (so a weight of
1 turns a signal off, and two signals count more than one). The signals:

- `failed_check`: a quick check of the same run failed (the checks run before the judge lane);
- `low_score`: a quick scorer without a threshold gave a value below 0.5;
- `tool_error`: a tool call failed;
- `failed_run`: the run's span has an error status;
- `length_outlier`, `latency_outlier`: the answer's length or the run's duration is more than
  three standard deviations (on a log scale) from this agent's running estimate;
- `new_version`: an agent, model, tool or `service.version` not seen in the last day (after the
  first ten minutes, in which everything is new);
- `user_feedback`: the run carries the feedback attribute (`user.feedback` unless configured)
  with a value that is not positive (`true`, a number above 0, `positive`, `up`, `good`).
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from otel_scorers.errors import ConfigError
from otel_scorers.fork_safety import renew_in_child
from otel_scorers.model import AgentRun, Score

DEFAULT_FEEDBACK_ATTRIBUTE = "user.feedback"
#: Runs of an agent before its length and latency estimates flag outliers.
OUTLIER_WARM_UP_RUNS = 30
OUTLIER_Z = 3.0
#: How far back a version counts as seen, and how long the tracker watches before anything is new.
RECENT_S = 24 * 3600.0
VERSION_WARM_UP_S = 600.0
#: Bounds of the trackers' memory (agents with estimates, versions remembered).
MAX_AGENTS = 256
MAX_VERSIONS = 4096
#: Longest name the trackers keep as it is (characters). A sender names its models, tools, agents
#: and versions: a longer name is remembered by a 16-byte digest of it, so that what the trackers
#: hold is bounded in bytes (about 300 per entry, ~1.3 MB at their bounds), not only in entries.
MAX_NAME_CHARS = 64
_POSITIVE = frozenset({"positive", "up", "thumbs_up", "good", "true", "yes"})


@dataclass(frozen=True, slots=True)
class RiskWeights:
    """How much each signal raises a run's chance of being judged (1: not at all). The defaults
    judge a run with a failed check about twenty times as often as one without any signal."""

    failed_check: float = 20.0
    low_score: float = 10.0
    tool_error: float = 10.0
    failed_run: float = 10.0
    length_outlier: float = 3.0
    latency_outlier: float = 3.0
    new_version: float = 5.0
    user_feedback: float = 20.0

    @classmethod
    def from_mapping(cls, given: Mapping[str, Any], path: str = "weights") -> RiskWeights:
        """Weights from a config mapping; every error names its key."""
        known = [item.name for item in fields(cls)]
        errors: list[ConfigError] = []
        values: dict[str, float] = {}
        for key, value in given.items():
            if key not in known:
                errors.append(
                    ConfigError(f"{path}.{key}", f"unknown signal; expected one of: {', '.join(known)}")
                )
            elif isinstance(value, bool) or not isinstance(value, (int, float)) or not 1 <= value < math.inf:
                errors.append(
                    ConfigError(
                        f"{path}.{key}", f"a weight is a finite number of at least 1 (1: off), got {value!r}"
                    )
                )
            else:
                values[key] = float(value)
        if errors:
            raise ConfigError.combine(errors)
        return cls(**values)


class _Estimate:
    """A running mean and variance (exponentially weighted once warmed up) of log values."""

    __slots__ = ("count", "mean", "variance")

    def __init__(self) -> None:
        self.count = 0
        self.mean = 0.0
        self.variance = 0.0

    def outlier_then_add(self, value: float) -> bool:
        x = math.log1p(max(value, 0.0))
        outlier = False
        if self.count >= OUTLIER_WARM_UP_RUNS:
            spread = math.sqrt(self.variance)
            outlier = abs(x - self.mean) > OUTLIER_Z * max(spread, 0.05)
        self.count += 1
        alpha = max(1.0 / self.count, 0.01)
        delta = x - self.mean
        self.mean += alpha * delta
        self.variance = (1 - alpha) * (self.variance + alpha * delta * delta)
        return outlier


class RiskSignals:
    """The signals a run shows and its weight; remembers what it needs (per-agent estimates,
    recently seen versions) within fixed bounds. Thread-safe."""

    def __init__(
        self,
        weights: RiskWeights | None = None,
        feedback_attribute: str = DEFAULT_FEEDBACK_ATTRIBUTE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.weights = weights or RiskWeights()
        self.feedback_attribute = feedback_attribute
        self._clock = clock
        self._started: float | None = None
        self._lengths: dict[str | None, _Estimate] = {}
        self._durations: dict[str | None, _Estimate] = {}
        self._seen: dict[tuple[str, str], float] = {}  # oldest first
        self._lock = threading.Lock()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        self._lock = threading.Lock()

    def weight(self, run: AgentRun, checks: Sequence[Score] = ()) -> float:
        weights = self.weights
        return 1.0 + sum(float(getattr(weights, signal)) - 1.0 for signal in self.signals(run, checks))

    def signals(self, run: AgentRun, checks: Sequence[Score] = ()) -> list[str]:
        """The names of the signals `run` shows (`checks`: the run's quick scores)."""
        found: list[str] = []
        if any(score.label == "fail" for score in checks):
            found.append("failed_check")
        if any(score.label is None and score.value is not None and score.value < 0.5 for score in checks):
            found.append("low_score")
        if any(call.failed for call in run.tool_calls):
            found.append("tool_error")
        if run.status == "error":
            found.append("failed_run")
        if _negative(run.attributes.get(self.feedback_attribute)):
            found.append("user_feedback")
        with self._lock:
            if run.output is not None and _estimate(self._lengths, run.agent_name).outlier_then_add(
                len(run.output)
            ):
                found.append("length_outlier")
            if run.end_ns > run.start_ns and _estimate(self._durations, run.agent_name).outlier_then_add(
                run.duration_ms
            ):
                found.append("latency_outlier")
            if self._new_versions(run):
                found.append("new_version")
        return found

    def _new_versions(self, run: AgentRun) -> bool:
        now = self._clock()
        if self._started is None:
            self._started = now
        watching = now - self._started >= VERSION_WARM_UP_S
        keys = [("model", bounded_name(model)) for model in run.models]
        keys.extend(("tool", bounded_name(name)) for name in run.tool_names)
        if run.agent_name:
            keys.append(("agent", bounded_name(run.agent_name)))
        version = run.resource.get("service.version")
        if version is not None:
            keys.append(("service.version", bounded_name(str(version))))
        new = False
        seen = self._seen
        for key in keys:
            last = seen.pop(key, None)
            if watching and (last is None or now - last > RECENT_S):
                new = True
            seen[key] = now
        while len(seen) > MAX_VERSIONS:
            del seen[next(iter(seen))]
        return new


def bounded_name(name: str) -> str:
    """The name as the trackers keep it: itself when short, else a digest of it."""
    if len(name) <= MAX_NAME_CHARS:
        return name
    return "#" + hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _estimate(estimates: dict[str | None, _Estimate], agent: str | None) -> _Estimate:
    agent = None if agent is None else bounded_name(agent)
    found = estimates.get(agent)
    if found is None:
        if len(estimates) >= MAX_AGENTS:
            del estimates[next(iter(estimates))]
        found = estimates[agent] = _Estimate()
    return found


def _negative(feedback: Any) -> bool:
    """Feedback that is there and not positive."""
    if feedback is None:
        return False
    if isinstance(feedback, bool):
        return not feedback
    if isinstance(feedback, (int, float)):
        return not feedback > 0
    return str(feedback).strip().lower() not in _POSITIVE
