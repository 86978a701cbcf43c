"""Former home of the quick checks: `otel_scorers.scorers.checks`."""

from otel_scorers.scorers.checks import *  # noqa: F403
