"""otel-scorers: live quality scoring for AI agents on OpenTelemetry."""

from otel_scorers import checks, scorers
from otel_scorers.binding import Binding, bind
from otel_scorers.config import Config, load_config
from otel_scorers.errors import ConfigError
from otel_scorers.model import AgentRun, JudgeUsage, Score, ScoreError, TokenUsage, ToolCall
from otel_scorers.processor import ScoringSpanProcessor
from otel_scorers.scorer import Scorer, scorer
from otel_scorers.version import __version__

__all__ = [
    "AgentRun",
    "Binding",
    "Config",
    "ConfigError",
    "JudgeUsage",
    "Score",
    "ScoreError",
    "Scorer",
    "ScoringSpanProcessor",
    "TokenUsage",
    "ToolCall",
    "__version__",
    "bind",
    "checks",
    "load_config",
    "scorer",
    "scorers",
]
