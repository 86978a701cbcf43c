"""Caps on what risk weights can buy of a paced binding's budget.

A run's weight (`risk.py`) multiplies its chance of being judged, and most signals are in the
sender's hands: user feedback, an error status, a failing tool. Unchecked, one tenant that marks
a tenth of the traffic risky takes most of the judge. Two caps hold it, on the runs' weighted
demand (the sum of their weights, remembered as the pacing remembers demand: decayed over
`pacing.DEMAND_WINDOW_S`):

- `max_signal_share` (default 0.5): the runs that show one signal take at most this share of the
  weighted demand;
- `share_key` (a filter path: `attributes.tenant.id`, `resource.service.name`, `agent.name`...)
  and `max_key_share` (default 0.25): the runs of one value of the key take at most this share
  of the weighted demand.

Beyond its share, the weights above 1 of a source's runs are scaled back until it fits, never
below 1: runs with more than the share of the plain traffic keep their plain chance.

Only weights change, never the decision rule: each judged score still carries the probability
it was judged with, so estimates stay unbiased. Runs whose weight was cut are counted
(`otel_scorers.sampling.capped`, by scorer and `otel_scorers.cap`: `signal` or `key`).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from otel_scorers.fork_safety import renew_in_child
from otel_scorers.model import AgentRun
from otel_scorers.runs.paths import path_getter
from otel_scorers.selection.pacing import DEMAND_WINDOW_S
from otel_scorers.selection.risk import RiskWeights, bounded_name

DEFAULT_MAX_SIGNAL_SHARE = 0.5
DEFAULT_MAX_KEY_SHARE = 0.25
#: Values of the share key remembered at once; beyond, the ones with the least demand are
#: forgotten (a sender who makes up a value a run spreads its weight thin, which the cap allows).
MAX_KEY_VALUES = 1024
#: How often the remembered demand decays (seconds).
_DECAY_EVERY_S = 1.0


@dataclass(frozen=True, slots=True)
class ShareCaps:
    """The caps' settings (see the module). `share_key`: None, no cap per key value."""

    max_signal_share: float = DEFAULT_MAX_SIGNAL_SHARE
    share_key: str | None = None
    max_key_share: float = DEFAULT_MAX_KEY_SHARE

    def __post_init__(self) -> None:
        for name in ("max_signal_share", "max_key_share"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value <= 1.0:
                raise ValueError(f"{name} must be a share above 0 and at most 1, got {value!r}")


@dataclass(slots=True)
class _Demand:
    """A source's runs, and their weight, as remembered (decayed)."""

    weight: float = 0.0
    runs: float = 0.0

    def add(self, weight: float) -> None:
        self.weight += weight
        self.runs += 1.0

    def decay(self, factor: float) -> None:
        self.weight *= factor
        self.runs *= factor


class RiskCaps:
    """A run's weight, its signals' and its key value's shares of the demand capped. Thread-safe."""

    def __init__(self, caps: ShareCaps, weights: RiskWeights, clock: Callable[[], float]) -> None:
        self.caps = caps
        self._weights = weights
        self._clock = clock
        self._key: Callable[[AgentRun], Any] | None = (
            path_getter(caps.share_key, "share_key") if caps.share_key is not None else None
        )
        #: Runs whose weight was cut, by cap (`signal`, `key`).
        self.capped: dict[str, int] = {"signal": 0, "key": 0}
        self._total = 0.0
        self._signals: dict[str, _Demand] = {}
        self._values: dict[str, _Demand] = {}
        self._decayed: float | None = None
        self._lock = threading.Lock()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        self._lock = threading.Lock()

    def weight(self, run: AgentRun, signals: Sequence[str]) -> float:
        """The weight of `run`, which shows `signals`, within the caps."""
        raw = 1.0 + sum(float(getattr(self._weights, signal)) - 1.0 for signal in signals)
        value = self._value(run)
        caps = self.caps
        with self._lock:
            self._decay()
            self._total += raw
            scale, cut_by = 1.0, ""
            for signal in signals:
                demand = self._signals.get(signal)
                if demand is None:
                    demand = self._signals[signal] = _Demand()
                demand.add(raw)
                found = self._scale(demand, caps.max_signal_share)
                if found < scale:
                    scale, cut_by = found, "signal"
            if value is not None:
                demand = self._values.get(value)
                if demand is None:
                    if len(self._values) >= MAX_KEY_VALUES:
                        self._forget_least()
                    demand = self._values[value] = _Demand()
                demand.add(raw)
                found = self._scale(demand, caps.max_key_share)
                if found < scale:
                    scale, cut_by = found, "key"
            if scale < 1.0 and raw > 1.0:
                self.capped[cut_by] += 1
        return 1.0 + (raw - 1.0) * scale

    def _scale(self, demand: _Demand, share: float) -> float:
        """By how much to scale the weights above 1 of a source's runs so that their weight is at
        most `share` of the demand (1: it fits already; 0: it does not even at weight 1)."""
        if share >= 1.0:
            return 1.0
        allowed = share / (1.0 - share) * (self._total - demand.weight)
        if demand.weight <= allowed or demand.weight <= demand.runs:
            return 1.0
        return max(0.0, (allowed - demand.runs) / (demand.weight - demand.runs))

    def _value(self, run: AgentRun) -> str | None:
        if self._key is None:
            return None
        try:
            found = self._key(run)
        except Exception:
            return None
        if isinstance(found, bool) or not isinstance(found, (str, int, float)):
            return None  # absent, or not a value that names anyone
        return bounded_name(str(found))

    def _decay(self) -> None:
        now = self._clock()
        if self._decayed is None:
            self._decayed = now
            return
        elapsed = now - self._decayed
        if elapsed < _DECAY_EVERY_S:
            return
        self._decayed = now
        factor = math.exp(-elapsed / DEMAND_WINDOW_S)
        self._total *= factor
        for demand in self._signals.values():
            demand.decay(factor)
        for key in list(self._values):
            demand = self._values[key]
            demand.decay(factor)
            if demand.runs < 1e-3:
                del self._values[key]

    def _forget_least(self) -> None:
        least = min(self._values, key=lambda key: self._values[key].weight)
        del self._values[least]
