"""The processor's `OTEL_SCORERS_*` environment variables: names, defaults and parsing, in one place.

As with the SDK's `OTEL_BSP_*` variables, a constructor argument that is given wins, then the
environment variable, then the default. In a configuration file's `processor:` section, the
environment variable overrides the file.
"""

from __future__ import annotations

import math
import os

from otel_scorers.errors import ConfigError
from otel_scorers.setting_bounds import MAX_COUNT, MAX_SECONDS

# The defaults, named for the parts that take these settings as arguments (the engine, the trace
# assembler, the `processor:` section of a configuration file).
HOLD_TIMEOUT_S = 5.0
MAX_QUEUE_SIZE = 2048
MAX_TRACES = 4096
MAX_SPANS_PER_TRACE = 2048

#: setting -> (environment variable, default)
PROCESSOR_SETTINGS: dict[str, tuple[str, float | int]] = {
    "hold_timeout_s": ("OTEL_SCORERS_HOLD_TIMEOUT_S", HOLD_TIMEOUT_S),
    "max_queue_size": ("OTEL_SCORERS_MAX_QUEUE_SIZE", MAX_QUEUE_SIZE),
    "max_traces": ("OTEL_SCORERS_MAX_TRACES", MAX_TRACES),
    "max_spans_per_trace": ("OTEL_SCORERS_MAX_SPANS_PER_TRACE", MAX_SPANS_PER_TRACE),
}


def default(setting: str) -> float | int:
    return PROCESSOR_SETTINGS[setting][1]


def from_environment(setting: str) -> float | int | None:
    """The setting's environment variable, parsed; None when it is unset or empty."""
    name, fallback = PROCESSOR_SETTINGS[setting]
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    kind = type(fallback)
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(name, f"expected {'a whole' if kind is int else 'a'} number, got {raw!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise ConfigError(name, f"must be a positive, finite number, got {raw!r}")
    largest = MAX_COUNT if kind is int else MAX_SECONDS
    if value > largest:
        raise ConfigError(name, f"must be at most {largest:,.0f}, got {raw!r}")
    return value


def resolve(setting: str, given: float | int | None) -> float | int:
    """`given` when it is not None, else the environment variable, else the default."""
    if given is not None:
        return given
    found = from_environment(setting)
    return found if found is not None else default(setting)
