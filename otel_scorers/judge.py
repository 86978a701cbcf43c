"""Former home of the judge layer: `otel_scorers.scorers.judge`."""

from otel_scorers.scorers.judge import *  # noqa: F403
