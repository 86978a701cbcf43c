"""The judge layer's former home, kept so that `from otel_scorers.judge import ...` still works:
everything lives in `otel_scorers.scorers.judge`."""

from otel_scorers.scorers.judge import *  # noqa: F403
from otel_scorers.scorers.judge import __all__ as __all__
